// Command coredns is CoreDNS with the globaladdr plugin compiled in: the
// plugins and their order come from plugin.cfg (see package core).
package main

import (
	"github.com/coredns/caddy"
	"github.com/coredns/coredns/coremain"

	_ "github.com/globaladdr/globaladdr/core"
)

// version is globaladdr's version, set at build time with
// -ldflags "-X main.version=...".
var version = "dev"

func main() {
	caddy.AppVersion = coremain.CoreVersion + " globaladdr-" + version
	coremain.Run()
}
