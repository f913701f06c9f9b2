package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestRegistryTXT checks external-dns's ownership TXT records: served as
// stored internally, gone externally, while ordinary TXT records pass.
func TestRegistryTXT(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{},
		a("app.team.example.com", "192.168.0.51"),
		aaaa("app.team.example.com", "fd00::51"),
		cname("www.team.example.com", "app.team.example.com"),
		txt("note.team.example.com", "hello"),
	)
	owner := func(name, resource string) dns.RR {
		return test.TXT(name + ` 300 IN TXT "\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/` + resource + `\""`)
	}
	runCases(t, c, []viewCase{
		{"internal view serves the ownership record of A", "internal", test.Case{
			Qname: "a-app.team.example.com.", Qtype: dns.TypeTXT,
			Answer: []dns.RR{owner("a-app.team.example.com.", "app")},
		}},
		{"external view: ownership record of A is NXDOMAIN with SOA", "external", test.Case{
			Qname: "a-app.team.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
		{"external view: ownership record of AAAA is NXDOMAIN with SOA", "external", test.Case{
			Qname: "aaaa-app.team.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
		{"external view: ownership record of CNAME is NXDOMAIN with SOA", "external", test.Case{
			Qname: "cname-www.team.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
		{"external view passes an ordinary TXT record", "external", test.Case{
			Qname: "note.team.example.com.", Qtype: dns.TypeTXT,
			Answer: []dns.RR{test.TXT(`note.team.example.com. 300 IN TXT "hello"`)},
		}},
		// The etcd plugin merges the equal ownership records of app's A and
		// AAAA into one.
		{"internal view: an ancestor's TXT lists ownership and ordinary records", "internal", test.Case{
			Qname: "team.example.com.", Qtype: dns.TypeTXT,
			Answer: []dns.RR{
				owner("team.example.com.", "app"),
				owner("team.example.com.", "www"),
				owner("team.example.com.", "note"),
				test.TXT(`team.example.com. 300 IN TXT "hello"`),
			},
		}},
		{"external view: an ancestor's TXT lists the ordinary records only", "external", test.Case{
			Qname: "team.example.com.", Qtype: dns.TypeTXT,
			Answer: []dns.RR{test.TXT(`team.example.com. 300 IN TXT "hello"`)},
		}},
	})
}
