package test

import (
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// mapOnlyCorefile is a site with no single global address: 1:1 NAT of a
// /24 (external), and the same with a global IPv4 address for what no map
// covers (external4).
const mapOnlyCorefile = `
example.com:{port:external} {
	globaladdr {
		map 192.168.0.0/24 198.51.100.0/24
	}
	etcd example.com {
		endpoint ETCD
	}
}

example.com:{port:external4} {
	globaladdr 203.0.113.10 {
		map 192.168.0.0/24 198.51.100.0/24
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// TestMapOnly checks blocks whose maps give the global addresses: mapped
// addresses are translated, and internal addresses that no map covers, with
// no global address of their family, are dropped, never leaked; an answer
// left empty is NODATA with the zone's SOA.
func TestMapOnly(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		a("mixed.example.com", "192.168.0.7", "10.0.0.7", "203.0.113.77"),
		a("unmapped.example.com", "10.0.0.5"),
		aaaa("app.example.com", "fd00::51"),
	)
	c := startCoreDNS(t, strings.ReplaceAll(mapOnlyCorefile, "ETCD", etcd.Endpoint()))
	nodata := []dns.RR{etcdSOA}
	runCases(t, c, []viewCase{
		{"a mapped address is translated", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app.example.com. 300 IN A 198.51.100.51")},
		}},
		{"unmapped internal addresses are dropped beside mapped and public ones", "external", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("mixed.example.com. 300 IN A 198.51.100.7"), test.A("mixed.example.com. 300 IN A 203.0.113.77")},
		}},
		{"an answer of unmapped internal addresses is NODATA", "external", test.Case{
			Qname: "unmapped.example.com.", Qtype: dns.TypeA, Ns: nodata,
		}},
		{"an internal AAAA with no map and no global IPv6 address is NODATA", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA, Ns: nodata,
		}},
		{"maps and an IPv4 address: unmapped IPv4 gets the address", "external4", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("mixed.example.com. 300 IN A 198.51.100.7"), test.A("mixed.example.com. 300 IN A 203.0.113.10"), test.A("mixed.example.com. 300 IN A 203.0.113.77")},
		}},
		{"maps and an IPv4 address: internal AAAA is NODATA", "external4", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA, Ns: nodata,
		}},
	})
}
