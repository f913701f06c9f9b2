// Command coredns is CoreDNS with the globaladdr plugin compiled in: the
// plugins and their order come from plugin.cfg (see package core).
package main

import (
	_ "embed"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/coremain"

	_ "github.com/globaladdr/globaladdr/core"
)

// version is globaladdr's version, set at build time with
// -ldflags "-X main.version=..." (make sets it from the git tag, see the
// Makefile). A build without it, such as go build or go install, shows the
// VERSION file's release, marked -dev.
var version string

// release is the VERSION file: the release this tree is, or leads to.
//
//go:embed VERSION
var release string

func main() {
	if version == "" {
		version = strings.TrimSpace(release) + "-dev"
	}
	caddy.AppVersion = coremain.CoreVersion + " globaladdr-" + version
	coremain.Run()
}
