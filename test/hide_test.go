package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestHiddenNames checks `hide secret.example.com db.svc.example.com` of the
// external view.
func TestHiddenNames(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{},
		a("secret.example.com", "192.168.0.70"),
		a("x.secret.example.com", "192.168.0.71"),
		cname("alias.example.com", "secret.example.com"),
		a("web.svc.example.com", "192.168.0.81"),
		a("db.svc.example.com", "192.168.0.82"),
	)
	runCases(t, c, []viewCase{
		// The etcd plugin answers a name with its whole subtree's records.
		{"internal view serves a hidden name", "internal", test.Case{
			Qname: "secret.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.A("secret.example.com. 300 IN A 192.168.0.70"),
				test.A("secret.example.com. 300 IN A 192.168.0.71"),
			},
		}},
		{"external view: hidden name is NXDOMAIN with SOA", "external", test.Case{
			Qname: "secret.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
		{"external view: name below a hidden name is NXDOMAIN with SOA", "external", test.Case{
			Qname: "x.secret.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
		{"external view: CNAME to a hidden name leaves NODATA with SOA", "external", test.Case{
			Qname: "alias.example.com.", Qtype: dns.TypeA,
			Ns: []dns.RR{etcdSOA},
		}},
		{"internal view: an ancestor's SRV lists every host", "internal", test.Case{
			Qname: "svc.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{
				test.SRV("svc.example.com. 300 IN SRV 10 50 0 web.svc.example.com."),
				test.SRV("svc.example.com. 300 IN SRV 10 50 0 db.svc.example.com."),
			},
			Extra: []dns.RR{
				test.A("web.svc.example.com. 300 IN A 192.168.0.81"),
				test.A("db.svc.example.com. 300 IN A 192.168.0.82"),
			},
		}},
		{"external view: an ancestor's SRV names no hidden host", "external", test.Case{
			Qname: "svc.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("svc.example.com. 300 IN SRV 10 50 0 web.svc.example.com.")},
			Extra:  []dns.RR{test.A("web.svc.example.com. 900 IN A 203.0.113.10")},
		}},
	})
}
