package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestSRVAdditional checks the addresses the etcd plugin puts in the
// Additional section of an SRV answer (SkyDNS semantics: one SRV record per
// host below the name, its addresses in Additional).
func TestSRVAdditional(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{},
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("mixed.example.com", "192.168.0.61", "198.51.100.20"),
	)
	runCases(t, c, []viewCase{
		{"internal view Additional keeps the internal addresses", "internal", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("app.example.com. 300 IN SRV 10 50 0 app.example.com.")},
			Extra: []dns.RR{
				test.A("app.example.com. 300 IN A 192.168.0.51"),
				test.AAAA("app.example.com. 300 IN AAAA fd00::51"),
			},
		}},
		{"external view Additional has the global addresses", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("app.example.com. 300 IN SRV 10 50 0 app.example.com.")},
			Extra: []dns.RR{
				test.A("app.example.com. 900 IN A 203.0.113.10"),
				test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10"),
			},
		}},
		{"external view Additional keeps a public address beside the global one", "external", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("mixed.example.com. 300 IN SRV 10 50 0 mixed.example.com.")},
			Extra: []dns.RR{
				test.A("mixed.example.com. 300 IN A 203.0.113.10"), // one TTL per RRset: the lowest
				test.A("mixed.example.com. 300 IN A 198.51.100.20"),
			},
		}},
	})
}
