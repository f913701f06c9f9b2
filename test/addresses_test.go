package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// etcdSOA is the SOA record the etcd plugin makes up for example.com; only
// its name, TTL and primary server are compared.
var etcdSOA = test.SOA("example.com. 30 IN SOA ns.dns.example.com. hostmaster.example.com. 0 7200 1800 86400 30")

func TestAddresses(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{},
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("mixed.example.com", "192.168.0.61", "192.168.0.62", "198.51.100.20"),
		a("public.example.com", "198.51.100.30"),
		a("mapped.example.com", "192.168.0.99"),
		a("prefixed.example.com", "10.20.0.7"),
		aaaa("prefixed.example.com", "fd00:20::7"),
	)
	runCases(t, c, []viewCase{
		{"A internal view keeps the internal address", "internal", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app.example.com. 300 IN A 192.168.0.51")},
		}},
		{"A external view has the global address and TTL", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")},
		}},
		{"AAAA internal view keeps the internal address", "internal", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA,
			Answer: []dns.RR{test.AAAA("app.example.com. 300 IN AAAA fd00::51")},
		}},
		{"AAAA external view has the global IPv6 address", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA,
			Answer: []dns.RR{test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10")},
		}},
		{"several addresses internal view lists them all", "internal", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.A("mixed.example.com. 300 IN A 192.168.0.61"),
				test.A("mixed.example.com. 300 IN A 192.168.0.62"),
				test.A("mixed.example.com. 300 IN A 198.51.100.20"),
			},
		}},
		{"several addresses external view has the global one once beside the public one", "external", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.A("mixed.example.com. 300 IN A 203.0.113.10"), // one TTL per RRset: the lowest
				test.A("mixed.example.com. 300 IN A 198.51.100.20"),
			},
		}},
		{"public address passes the external view unchanged", "external", test.Case{
			Qname: "public.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("public.example.com. 300 IN A 198.51.100.30")},
		}},
		{"map to one address", "external", test.Case{
			Qname: "mapped.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("mapped.example.com. 900 IN A 198.51.100.99")},
		}},
		{"map IPv4 prefix keeps the host bits", "external", test.Case{
			Qname: "prefixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("prefixed.example.com. 900 IN A 198.51.100.7")},
		}},
		{"map IPv6 prefix keeps the host bits", "external", test.Case{
			Qname: "prefixed.example.com.", Qtype: dns.TypeAAAA,
			Answer: []dns.RR{test.AAAA("prefixed.example.com. 900 IN AAAA 2001:db8:20::7")},
		}},
		{"IPv4-only external view rewrites A", "external4", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")},
		}},
		{"IPv4-only external view drops internal AAAA: NODATA with SOA", "external4", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA,
			Ns: []dns.RR{etcdSOA},
		}},
	})
}
