package globaladdr

import (
	"context"
	"fmt"
	stdlog "log"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

const zoneSOA = "example.com. 300 IN SOA ns.dns.example.com. hostmaster.example.com. 1 7200 1800 86400 30"

// reply is what the test backend answers to the test's query.
type reply struct {
	rcode             int
	answer, ns, extra []dns.RR
}

// backend answers SOA queries with the zone's SOA and every other query
// with rep, and remembers the names it was asked for.
func backend(rep reply, asked *[]string) plugin.Handler {
	return plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		*asked = append(*asked, r.Question[0].Name+" "+dns.TypeToString[r.Question[0].Qtype])
		m := new(dns.Msg)
		m.SetReply(r)
		m.Authoritative = true
		if r.Question[0].Qtype == dns.TypeSOA {
			m.Answer = []dns.RR{test.SOA(zoneSOA)}
		} else {
			m.Rcode, m.Answer, m.Ns, m.Extra = rep.rcode, rep.answer, rep.ns, rep.extra
		}
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	})
}

// newTestPlugin parses corefile and puts the result above next.
func newTestPlugin(t *testing.T, corefile string, next plugin.Handler) *GlobalAddr {
	t.Helper()
	g, err := parse(caddy.NewTestController("dns", corefile))
	if err != nil {
		t.Fatal(err)
	}
	g.Next = next
	return g
}

const (
	v4only = "globaladdr 203.0.113.10 {\n ttl 900\n}"
	dual   = "globaladdr 203.0.113.10 2001:db8::10 {\n ttl 900\n}"
)

func TestServeDNS(t *testing.T) {
	soa := []dns.RR{test.SOA(zoneSOA)}
	tests := []struct {
		name     string
		corefile string
		qtype    uint16
		reply    reply
		want     test.Case
	}{
		{
			name: "internal A becomes the global address with the configured TTL", corefile: v4only, qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")}},
		},
		{
			name: "without ttl the backend's TTL is kept", corefile: "globaladdr 203.0.113.10", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 30 IN A 203.0.113.10")}},
		},
		{
			name: "public addresses pass unchanged beside rewritten ones", corefile: v4only, qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1"), test.A("app.example.com. 30 IN A 10.0.0.5")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1"), test.A("app.example.com. 30 IN A 203.0.113.10")}},
		},
		{
			name: "an RRset of rewritten and public records gets one TTL, the lowest", corefile: v4only, qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 3600 IN A 198.51.100.1"), test.A("app.example.com. 300 IN A 198.51.100.2"), test.A("app.example.com. 300 IN A 10.0.0.5"), test.A("db.example.com. 3600 IN A 10.0.0.6")}},
			want: test.Case{Answer: []dns.RR{test.A("app.example.com. 300 IN A 198.51.100.1"), test.A("app.example.com. 300 IN A 198.51.100.2"), test.A("app.example.com. 300 IN A 203.0.113.10"),
				test.A("db.example.com. 900 IN A 203.0.113.10")}},
		},
		{
			name: "several internal addresses become one record", corefile: v4only, qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51"), test.A("app.example.com. 30 IN A 192.168.0.52"), test.A("app.example.com. 30 IN A 203.0.113.10")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")}},
		},
		{
			name: "several global addresses of a family all answer", corefile: "globaladdr 203.0.113.10 203.0.113.11", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 30 IN A 203.0.113.10"), test.A("app.example.com. 30 IN A 203.0.113.11")}},
		},
		{
			name: "internal AAAA becomes the global IPv6 address", corefile: dual, qtype: dns.TypeAAAA,
			reply: reply{answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA fd00::51")}},
			want:  test.Case{Answer: []dns.RR{test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10")}},
		},
		{
			name: "IPv4-mapped internal AAAA is internal", corefile: dual, qtype: dns.TypeAAAA,
			reply: reply{answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA ::ffff:192.168.0.51")}},
			want:  test.Case{Answer: []dns.RR{test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10")}},
		},
		{
			name: "internal AAAA without a global IPv6 address is dropped: NODATA with SOA", corefile: v4only, qtype: dns.TypeAAAA,
			reply: reply{answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA fd00::51")}, extra: []dns.RR{test.A("ns.dns.example.com. 30 IN A 8.8.8.8")}},
			want:  test.Case{Ns: soa},
		},
		{
			name: "map to one address", corefile: "globaladdr 203.0.113.10 {\n map 192.168.0.51 198.51.100.7\n}", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51"), test.A("db.example.com. 30 IN A 192.168.0.52")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.7"), test.A("db.example.com. 30 IN A 203.0.113.10")}},
		},
		{
			name: "map a prefix keeping the host bits, most specific first", corefile: "globaladdr 203.0.113.10 {\n map 192.168.0.0/16 198.51.0.0/16\n map 192.168.7.0/24 192.0.2.0/24\n}", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("a.example.com. 30 IN A 192.168.3.4"), test.A("b.example.com. 30 IN A 192.168.7.9")}},
			want:  test.Case{Answer: []dns.RR{test.A("a.example.com. 30 IN A 198.51.3.4"), test.A("b.example.com. 30 IN A 192.0.2.9")}},
		},
		{
			name: "map an IPv6 prefix keeping the host bits", corefile: "globaladdr 203.0.113.10 {\n map fd00:1::/48 2001:db8:7::/48\n}", qtype: dns.TypeAAAA,
			reply: reply{answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA fd00:1:0:5::51")}},
			want:  test.Case{Answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA 2001:db8:7:5::51")}},
		},
		{
			name: "a map source counts as internal even outside the internal ranges", corefile: "globaladdr 203.0.113.10 {\n internal 10.0.0.0/8\n map 192.0.2.0/24 198.51.100.0/24\n}", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("a.example.com. 30 IN A 192.0.2.5"), test.A("b.example.com. 30 IN A 192.168.0.5")}},
			want:  test.Case{Answer: []dns.RR{test.A("a.example.com. 30 IN A 198.51.100.5"), test.A("b.example.com. 30 IN A 192.168.0.5")}},
		},
		{
			name: "CNAME chain: the target's address is rewritten, the CNAME kept", corefile: v4only, qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.CNAME("www.example.com. 30 IN CNAME app.example.com."), test.A("app.example.com. 30 IN A 192.168.0.51")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10"), test.CNAME("www.example.com. 30 IN CNAME app.example.com.")}},
		},
		{
			name: "SRV: Additional addresses are rewritten", corefile: v4only, qtype: dns.TypeSRV,
			reply: reply{
				answer: []dns.RR{test.SRV("example.com. 30 IN SRV 10 100 0 app.example.com.")},
				extra:  []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51")},
			},
			want: test.Case{
				Answer: []dns.RR{test.SRV("example.com. 30 IN SRV 10 100 0 app.example.com.")},
				Extra:  []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")},
			},
		},
		{
			name: "ownership records are removed; a name with nothing else is NXDOMAIN", corefile: v4only, qtype: dns.TypeTXT,
			reply: reply{answer: []dns.RR{test.TXT(`a-app.example.com. 30 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`)}},
			want:  test.Case{Rcode: dns.RcodeNameError, Ns: soa},
		},
		{
			name: "ownership records are removed, other TXT stays", corefile: v4only, qtype: dns.TypeTXT,
			reply: reply{answer: []dns.RR{test.TXT(`app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`), test.TXT(`app.example.com. 30 IN TXT "v=spf1 -all"`)}},
			want:  test.Case{Answer: []dns.RR{test.TXT(`app.example.com. 30 IN TXT "v=spf1 -all"`)}},
		},
		{
			name: "keep_registry passes ownership records", corefile: "globaladdr 203.0.113.10 {\n keep_registry\n}", qtype: dns.TypeTXT,
			reply: reply{answer: []dns.RR{test.TXT(`a-app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`)}},
			want:  test.Case{Answer: []dns.RR{test.TXT(`a-app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`)}},
		},
		{
			name: "expose marked: another backend's name has no mark, and is NXDOMAIN", corefile: "globaladdr 203.0.113.10 {\n expose marked\n}", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("app.example.com. 30 IN A 203.0.113.7")}},
			want:  test.Case{Rcode: dns.RcodeNameError, Ns: soa},
		},
		{
			name: "expose marked: an ACME challenge passes", corefile: "globaladdr 203.0.113.10 {\n expose marked\n}", qtype: dns.TypeTXT,
			reply: reply{answer: []dns.RR{test.TXT(`_acme-challenge.example.com. 30 IN TXT "token"`)}},
			want:  test.Case{Qname: "_acme-challenge.example.com.", Answer: []dns.RR{test.TXT(`_acme-challenge.example.com. 30 IN TXT "token"`)}},
		},
		{
			name: "a hidden name is NXDOMAIN without asking the backend for it", corefile: "globaladdr 203.0.113.10 {\n hide internal.example.com\n}", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.A("x.internal.example.com. 30 IN A 192.168.0.9")}},
			want:  test.Case{Qname: "x.internal.example.com.", Rcode: dns.RcodeNameError, Ns: soa},
		},
		{
			name: "a hidden name's NXDOMAIN carries no SOA that names a hidden name", corefile: "globaladdr 203.0.113.10 {\n hide dns.example.com\n}", qtype: dns.TypeA,
			want: test.Case{Qname: "x.dns.example.com.", Rcode: dns.RcodeNameError},
		},
		{
			name: "hidden names vanish from an ancestor's answer: SRV target and Additional", corefile: "globaladdr 203.0.113.10 {\n hide internal.example.com\n}", qtype: dns.TypeSRV,
			reply: reply{
				answer: []dns.RR{test.SRV("example.com. 30 IN SRV 10 50 0 app.example.com."), test.SRV("example.com. 30 IN SRV 10 50 0 db.internal.example.com.")},
				extra:  []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1"), test.A("db.internal.example.com. 30 IN A 198.51.100.2")},
			},
			want: test.Case{
				Answer: []dns.RR{test.SRV("example.com. 30 IN SRV 10 50 0 app.example.com.")},
				Extra:  []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1")},
			},
		},
		{
			name: "a CNAME to a hidden name is removed: NODATA", corefile: "globaladdr 203.0.113.10 {\n hide internal.example.com\n}", qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{test.CNAME("www.example.com. 30 IN CNAME db.internal.example.com."), test.A("db.internal.example.com. 30 IN A 192.168.0.9")}},
			want:  test.Case{Ns: soa},
		},
		{
			name: "NXDOMAIN passes unchanged", corefile: v4only, qtype: dns.TypeA,
			reply: reply{rcode: dns.RcodeNameError, ns: soa},
			want:  test.Case{Rcode: dns.RcodeNameError, Ns: soa},
		},
		{
			name: "NODATA passes unchanged", corefile: v4only, qtype: dns.TypeAAAA,
			reply: reply{ns: soa},
			want:  test.Case{Ns: soa},
		},
		{
			name: "an internal address in a SERVFAIL is dropped all the same", corefile: v4only, qtype: dns.TypeA,
			reply: reply{rcode: dns.RcodeServerFailure, extra: []dns.RR{test.A("app.example.com. 30 IN A 10.1.1.1")}},
			want:  test.Case{Rcode: dns.RcodeServerFailure, Extra: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")}},
		},
		{
			name: "a malformed address is dropped", corefile: v4only, qtype: dns.TypeA,
			reply: reply{answer: []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "app.example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: []byte{1, 2, 3}}, test.A("app.example.com. 30 IN A 198.51.100.1")}},
			want:  test.Case{Answer: []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1")}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			g := newTestPlugin(t, tc.corefile, backend(tc.reply, &asked))
			qname := tc.want.Qname
			if qname == "" {
				qname = "app.example.com."
			}
			tc.want.Qname, tc.want.Qtype = qname, tc.qtype
			req := tc.want.Msg()
			before := fmt.Sprint(tc.reply)

			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := g.ServeDNS(context.Background(), rec, req); err != nil {
				t.Fatal(err)
			}
			if err := test.SortAndCheck(rec.Msg, tc.want); err != nil {
				t.Errorf("%v\n%s", err, rec.Msg)
			}
			if after := fmt.Sprint(tc.reply); after != before {
				t.Errorf("the backend's records were modified:\nbefore %s\nafter  %s", before, after)
			}
			for _, q := range asked {
				if g.policy.Hidden(q[:strings.IndexByte(q, ' ')]) && !strings.HasSuffix(q, " SOA") {
					t.Errorf("the backend was asked for hidden data: %s", q)
				}
			}
		})
	}
}

// TestServeDNSRdata checks the answers with addresses and names in other
// records' data, and map-only blocks.
func TestServeDNSRdata(t *testing.T) {
	soa := zoneSOA
	const mapsOnly = "globaladdr {\n map 192.168.0.0/24 198.51.100.0/24\n}"
	tests := []struct {
		name     string
		corefile string
		qtype    uint16
		answer   []string
		want     []string // the answer, or the authority section when it is empty
	}{
		{
			name: "HTTPS hints: internal ones become the global address of their family, once", corefile: dual, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint="192.168.0.51,203.0.113.10,192.168.0.52" ipv6hint="fd00::51"`},
			want:   []string{`app.example.com.	900	IN	HTTPS	1 . alpn="h2" ipv4hint="203.0.113.10" ipv6hint="2001:db8::10"`},
		},
		{
			name: "a hint key with no global address of its family is removed, from mandatory too", corefile: v4only, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . mandatory=ipv6hint alpn="h2" ipv6hint="fd00::51"`},
			want:   []string{`app.example.com.	900	IN	HTTPS	1 . alpn="h2"`},
		},
		{
			name: "SVCB hints follow map", corefile: "globaladdr 203.0.113.10 {\n map 192.168.0.0/24 198.51.100.0/24\n}", qtype: dns.TypeSVCB,
			answer: []string{`svc.example.com. 30 IN SVCB 1 app.example.com. port="8443" ipv4hint="192.168.0.51,192.168.1.7"`},
			want:   []string{`svc.example.com.	30	IN	SVCB	1 app.example.com. port="8443" ipv4hint="198.51.100.51,203.0.113.10"`},
		},
		{
			name: "public hints pass unchanged", corefile: v4only, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint="198.51.100.1"`},
			want:   []string{`app.example.com.	30	IN	HTTPS	1 . alpn="h2" ipv4hint="198.51.100.1"`},
		},
		{
			name: "HTTPS naming a hidden target is removed", corefile: "globaladdr 203.0.113.10 {\n hide secret.example.com\n}", qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 db.secret.example.com. alpn="h2"`, `app.example.com. 30 IN HTTPS 2 . alpn="h2"`},
			want:   []string{`app.example.com.	30	IN	HTTPS	2 . alpn="h2"`},
		},
		{
			name: "records with an internal address in their data are removed: NODATA", corefile: v4only, qtype: dns.TypeANY,
			answer: []string{"app.example.com. 30 IN AMTRELAY 10 0 1 192.168.0.61", "app.example.com. 30 IN L32 10 192.168.0.62", "app.example.com. 30 IN APL 1:10.0.0.0/8"},
			want:   []string{soa},
		},
		{
			name: "records with public addresses in their data pass", corefile: v4only, qtype: dns.TypeANY,
			answer: []string{"app.example.com. 30 IN AMTRELAY 10 0 1 198.51.100.61", "app.example.com. 30 IN L32 10 198.51.100.62"},
			want:   []string{"app.example.com.	30	IN	AMTRELAY	10 0 1 198.51.100.61", "app.example.com.	30	IN	L32	10 198.51.100.62"},
		},
		{
			name: "NAPTR replacement and KX exchanger are names that hide applies to", corefile: "globaladdr 203.0.113.10 {\n hide secret.example.com\n}", qtype: dns.TypeANY,
			answer: []string{`app.example.com. 30 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.secret.example.com.`, "app.example.com. 30 IN KX 10 kx.secret.example.com.", "app.example.com. 30 IN KX 20 kx.example.com."},
			want:   []string{"app.example.com.	30	IN	KX	20 kx.example.com."},
		},
		{
			name: "an RRSIG over a rewritten HTTPS RRset is removed", corefile: v4only, qtype: dns.TypeHTTPS,
			answer: []string{`app.example.com. 30 IN HTTPS 1 . ipv4hint="192.168.0.51"`, "app.example.com. 30 IN RRSIG HTTPS 13 3 30 20300101000000 20200101000000 1234 example.com. c2lnbmF0dXJl"},
			want:   []string{`app.example.com.	900	IN	HTTPS	1 . ipv4hint="203.0.113.10"`},
		},
		{
			name: "map-only: mapped addresses are translated, others dropped", corefile: mapsOnly, qtype: dns.TypeA,
			answer: []string{"app.example.com. 30 IN A 192.168.0.51", "app.example.com. 30 IN A 192.168.1.51", "app.example.com. 30 IN A 198.51.100.200"},
			want:   []string{"app.example.com.	30	IN	A	198.51.100.51", "app.example.com.	30	IN	A	198.51.100.200"},
		},
		{
			name: "map-only: an answer of unmapped internal addresses is NODATA", corefile: mapsOnly, qtype: dns.TypeA,
			answer: []string{"app.example.com. 30 IN A 192.168.1.51", "app.example.com. 30 IN AAAA fd00::51"},
			want:   []string{soa},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			var answer []dns.RR
			for _, s := range tc.answer {
				answer = append(answer, mustRR(t, s))
			}
			g := newTestPlugin(t, tc.corefile, backend(reply{answer: answer}, &asked))
			req := new(dns.Msg)
			req.SetQuestion("app.example.com.", tc.qtype)
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := g.ServeDNS(context.Background(), rec, req); err != nil {
				t.Fatal(err)
			}
			got := rec.Msg.Answer
			if len(got) == 0 {
				got = rec.Msg.Ns
			}
			var gotS, wantS []string
			for _, rr := range got {
				gotS = append(gotS, rr.String())
			}
			for _, s := range tc.want {
				wantS = append(wantS, mustRR(t, s).String())
			}
			slices.Sort(gotS)
			slices.Sort(wantS)
			if !slices.Equal(gotS, wantS) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(gotS, "\n"), strings.Join(wantS, "\n"))
			}
		})
	}
}

func mustRR(t *testing.T, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return rr
}

// TestDebugNamesDropped checks that, with the debug plugin's logging on, a
// reply the view dropped an internal record from logs the record itself
// beside the counts: an operator sees which name lost what.
func TestDebugNamesDropped(t *testing.T) {
	var logged strings.Builder
	stdlog.SetOutput(&logged)
	clog.D.Set()
	t.Cleanup(func() { clog.D.Clear(); stdlog.SetOutput(os.Stderr) })
	var asked []string
	g := newTestPlugin(t, v4only, backend(reply{answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA fd00::51")}}, &asked))
	m := new(dns.Msg)
	m.SetQuestion("app.example.com.", dns.TypeAAAA)
	if _, err := g.ServeDNS(context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[DEBUG] plugin/globaladdr: dropped 0 A and 1 AAAA internal records without a global address",
		"[DEBUG] plugin/globaladdr: the first record dropped: app.example.com.\t30\tIN\tAAAA\tfd00::51",
	} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the debug log lacks %q:\n%s", want, logged.String())
		}
	}
}
