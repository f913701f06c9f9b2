package etcdzone

import (
	"net/netip"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"

	"github.com/miekg/dns"
)

// TestSiblingGlue refers a query to dev.example.com, whose name servers are
// ns1.lab.example.com, under the sibling delegation lab.example.com, and
// app.example.com, a name of the zone: the referral carries the sibling's
// glue, as BIND's does, and not the address of the zone's own name.
func TestSiblingGlue(t *testing.T) {
	x := newTestPlugin(t, startTestEtcd(t, zoneRecords...))
	x.corefile.Delegations = []config.Delegation{
		{Name: "lab.example.com.", NS: []string{"ns1.lab.example.com.", "ns2.example.net."}},
		{Name: "dev.example.com.", NS: []string{"ns1.lab.example.com.", "app.example.com."}},
	}
	x.corefile.Glue = []config.Glue{{Name: "ns1.lab.example.com.", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.53"), netip.MustParseAddr("2001:db8::53")}}}
	runTestZone(t, x)
	glue := []dns.RR{test.A("ns1.lab.example.com. 3600 IN A 192.0.2.53"), test.AAAA("ns1.lab.example.com. 3600 IN AAAA 2001:db8::53")}
	for _, tc := range []test.Case{
		{Qname: "host.dev.example.com.", Qtype: dns.TypeA,
			Ns:    []dns.RR{test.NS("dev.example.com. 3600 IN NS app.example.com."), test.NS("dev.example.com. 3600 IN NS ns1.lab.example.com.")},
			Extra: glue,
		},
		{Qname: "host.lab.example.com.", Qtype: dns.TypeA,
			Ns:    []dns.RR{test.NS("lab.example.com. 3600 IN NS ns1.lab.example.com."), test.NS("lab.example.com. 3600 IN NS ns2.example.net.")},
			Extra: glue,
		},
	} {
		m := exchange(t, x, tc.Qname, tc.Qtype)
		if err := test.SortAndCheck(m, tc); err != nil || m.Authoritative {
			t.Errorf("%s %s: %v, AA %v\n%v", tc.Qname, dns.TypeToString[tc.Qtype], err, m.Authoritative, m)
		}
	}
}

// TestCNAMELoop asks for names whose CNAMEs loop, through a wildcard and
// between two names: SERVFAIL, with the chain up to the loop, each record
// once, and nothing in Authority, as BIND answers.
func TestCNAMELoop(t *testing.T) {
	x, _ := newTestZone(t,
		externaldns.Record{Name: "*.loop.example.com", Type: "CNAME", Targets: []string{"x.loop.example.com"}},
		externaldns.Record{Name: "ping.example.com", Type: "CNAME", Targets: []string{"pong.example.com"}},
		externaldns.Record{Name: "pong.example.com", Type: "CNAME", Targets: []string{"ping.example.com"}},
	)
	for _, tc := range []test.Case{
		{Qname: "covered.loop.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeServerFailure, Answer: []dns.RR{
			test.CNAME("covered.loop.example.com. 300 IN CNAME x.loop.example.com."),
			test.CNAME("x.loop.example.com. 300 IN CNAME x.loop.example.com."),
		}},
		{Qname: "x.loop.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeServerFailure, Answer: []dns.RR{
			test.CNAME("x.loop.example.com. 300 IN CNAME x.loop.example.com."),
		}},
		{Qname: "ping.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeServerFailure, Answer: []dns.RR{
			test.CNAME("ping.example.com. 300 IN CNAME pong.example.com."),
			test.CNAME("pong.example.com. 300 IN CNAME ping.example.com."),
		}},
		{Qname: "ping.example.com.", Qtype: dns.TypeCNAME, Answer: []dns.RR{
			test.CNAME("ping.example.com. 300 IN CNAME pong.example.com."),
		}},
	} {
		m := exchange(t, x, tc.Qname, tc.Qtype)
		if err := test.SortAndCheck(m, tc); err != nil || !m.Authoritative {
			t.Errorf("%s %s: %v, AA %v\n%v", tc.Qname, dns.TypeToString[tc.Qtype], err, m.Authoritative, m)
		}
	}
}
