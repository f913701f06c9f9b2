// Package core assembles the globaladdr build of CoreDNS. Importing it
// registers every plugin listed in plugin.cfg and makes plugin.cfg's order
// CoreDNS's directive order, for the coredns command and for tests that
// start servers in-process alike.
package core

//go:generate go run generate.go

import "github.com/coredns/coredns/core/dnsserver"

func init() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		panic("plugin.cfg: " + err.Error())
	}
}
