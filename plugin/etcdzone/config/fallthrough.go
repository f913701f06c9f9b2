package config

import (
	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"

	"github.com/miekg/dns"
)

// parseFallthrough reads "fallthrough [ZONES...]" into f as the CoreDNS
// plugins read it (a zone may be a reverse CIDR, 10.0.0.0/8): the questions
// for names of ZONES (default: every name) that the zones do not hold go
// to the next plugin.
func parseFallthrough(c *caddy.Controller, args []string, f *fall.F) error {
	for _, arg := range args {
		hosts, port, err := plugin.SplitHostPort(arg)
		if err != nil || port != "" || len(hosts) == 0 {
			return c.Errf("fallthrough: %q is not a zone", arg)
		}
		for _, h := range hosts {
			if _, ok := dns.IsDomainName(h); !ok {
				return c.Errf("fallthrough: %q is not a zone", arg)
			}
		}
	}
	f.SetZonesFromArgs(args)
	return nil
}
