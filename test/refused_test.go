package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestOutOfZoneRefused checks that the external views are no open resolver:
// names outside their zones are refused.
func TestOutOfZoneRefused(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{})
	runCases(t, c, []viewCase{
		{"external view refuses a foreign name", "external", test.Case{
			Qname: "example.org.", Qtype: dns.TypeA, Rcode: dns.RcodeRefused,
		}},
		{"external view refuses a name below a foreign name", "external", test.Case{
			Qname: "www.example.org.", Qtype: dns.TypeAAAA, Rcode: dns.RcodeRefused,
		}},
		{"IPv4-only external view refuses a zone only other views serve", "external4", test.Case{
			Qname: "edge.example.net.", Qtype: dns.TypeA, Rcode: dns.RcodeRefused,
		}},
	})
}
