package test

import (
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// ptrCorefile serves the reverse zones of an internal and of a public
// network from etcd (ETCD stands for its endpoint) in an internal and an
// external view.
const ptrCorefile = `
168.192.in-addr.arpa:{port:internal} 51.198.in-addr.arpa:{port:internal} {
	etcd 168.192.in-addr.arpa 51.198.in-addr.arpa {
		endpoint ETCD
	}
}

168.192.in-addr.arpa:{port:external} 51.198.in-addr.arpa:{port:external} {
	globaladdr 203.0.113.10 {
		ttl 900
	}
	etcd 168.192.in-addr.arpa 51.198.in-addr.arpa {
		endpoint ETCD
	}
}
`

// TestPTR checks the PTR records external-dns (v0.22.0 and later, with
// --managed-record-types=PTR) writes: the external view passes those of
// public addresses untouched, and the reverse names of internal addresses,
// which tell the address, do not exist outside.
func TestPTR(t *testing.T) {
	t.Parallel()
	etcd := startEtcd(t)
	putRecords(t, etcd,
		record("51.0.168.192.in-addr.arpa", "PTR", []string{"app.example.com"}),
		record("20.100.51.198.in-addr.arpa", "PTR", []string{"shop.example.com"}),
	)
	c := startCoreDNS(t, strings.ReplaceAll(ptrCorefile, "ETCD", etcd.Endpoint()))
	runCases(t, c, ptrCases("app.example.com", "shop.example.com"))
}

// ptrCases are the queries of ptrCorefile's views for the PTR records of
// 192.168.0.51 (internal) to app and of 198.51.100.20 (public) to shop,
// with a TTL of 300: the internal view serves both; the external view
// passes the public one untouched, and the internal one's reverse name,
// which tells the address, and its ownership record do not exist there.
func ptrCases(app, shop string) []viewCase {
	internalPTR := test.PTR("51.0.168.192.in-addr.arpa. 300 IN PTR " + dns.Fqdn(app))
	publicPTR := test.PTR("20.100.51.198.in-addr.arpa. 300 IN PTR " + dns.Fqdn(shop))
	return []viewCase{
		{"internal view serves the PTR of an internal address", "internal", test.Case{
			Qname: "51.0.168.192.in-addr.arpa.", Qtype: dns.TypePTR,
			Answer: []dns.RR{internalPTR},
		}},
		{"internal view serves the PTR of a public address", "internal", test.Case{
			Qname: "20.100.51.198.in-addr.arpa.", Qtype: dns.TypePTR,
			Answer: []dns.RR{publicPTR},
		}},
		{"external view: the reverse name of an internal address is NXDOMAIN", "external", test.Case{
			Qname: "51.0.168.192.in-addr.arpa.", Qtype: dns.TypePTR, Rcode: dns.RcodeNameError,
		}},
		{"external view: the PTR's ownership record is NXDOMAIN too", "external", test.Case{
			Qname: "ptr-51.0.168.192.in-addr.arpa.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError,
		}},
		{"external view passes the PTR of a public address untouched", "external", test.Case{
			Qname: "20.100.51.198.in-addr.arpa.", Qtype: dns.TypePTR,
			Answer: []dns.RR{publicPTR},
		}},
	}
}
