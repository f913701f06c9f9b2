package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

func TestCNAMEChains(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{},
		a("app.example.com", "192.168.0.51"),
		cname("www.example.com", "app.example.com"),
		cname("chain.example.com", "www.example.com"),
		cname("cdn.example.com", "edge.example.net"),
		cname("pub.example.com", "www.example.net"),
	)
	runCases(t, c, []viewCase{
		{"in zone internal view ends at the internal address", "internal", test.Case{
			Qname: "www.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("www.example.com. 300 IN CNAME app.example.com."),
				test.A("app.example.com. 300 IN A 192.168.0.51"),
			},
		}},
		{"in zone external view ends at the global address", "external", test.Case{
			Qname: "www.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("www.example.com. 300 IN CNAME app.example.com."),
				test.A("app.example.com. 900 IN A 203.0.113.10"),
			},
		}},
		{"two links in zone external view ends at the global address", "external", test.Case{
			Qname: "chain.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("chain.example.com. 300 IN CNAME www.example.com."),
				test.CNAME("www.example.com. 300 IN CNAME app.example.com."),
				test.A("app.example.com. 900 IN A 203.0.113.10"),
			},
		}},
		{"out of zone internal view ends at the internal address", "internal", test.Case{
			Qname: "cdn.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("cdn.example.com. 300 IN CNAME edge.example.net."),
				test.A("edge.example.net. 3600 IN A 10.0.0.7"),
			},
		}},
		{"out of zone external view ends at the global address", "external", test.Case{
			Qname: "cdn.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("cdn.example.com. 300 IN CNAME edge.example.net."),
				test.A("edge.example.net. 900 IN A 203.0.113.10"),
			},
		}},
		{"out of zone to a public address external view keeps it", "external", test.Case{
			Qname: "pub.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("pub.example.com. 300 IN CNAME www.example.net."),
				test.A("www.example.net. 3600 IN A 198.51.100.80"),
			},
		}},
	})
}
