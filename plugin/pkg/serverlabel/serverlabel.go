// Package serverlabel gives the server label of a server block's metrics as
// CoreDNS's metrics plugin gives it: one per address the block listens on
// ("dns://127.0.0.1:53", "dns://:53"), the address CoreDNS names the server
// of. Every plugin of this repository labels a block's metrics with these,
// so that a dashboard joins them with CoreDNS's own on server; a block that
// listens on several addresses has each of its values, and each event,
// under every one of them.
package serverlabel

import (
	"net"

	"github.com/coredns/coredns/core/dnsserver"
)

// Of returns the server labels of cfg's server block, one per listen
// address, in the block's order.
func Of(cfg *dnsserver.Config) []string {
	var labels []string
	for _, host := range cfg.ListenHosts {
		addr := net.JoinHostPort(host, cfg.Port)
		if a, err := net.ResolveTCPAddr("tcp", addr); err == nil {
			addr = a.String()
		}
		labels = append(labels, cfg.Transport+"://"+addr)
	}
	return labels
}
