package globaladdr

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

const corpusPolicy = "globaladdr 203.0.113.10 203.0.113.11 2001:db8::10 {\n ttl 60\n map 192.168.7.0/24 198.51.100.0/24\n map fd00:1::/32 2001:db8:1::/32\n hide secret.example.com\n}"

func TestNotReady(t *testing.T) {
	tests := []struct {
		name   string
		answer []dns.RR
		want   test.Case
	}{
		{
			name:   "an internal address needing the global address is SERVFAIL",
			answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51")},
			want:   test.Case{Rcode: dns.RcodeServerFailure},
		},
		{
			name:   "a public address passes",
			answer: []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1")},
			want:   test.Case{Answer: []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1")}},
		},
		{
			name:   "a mapped address needs no global address",
			answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.7.7")},
			want:   test.Case{Answer: []dns.RR{test.A("app.example.com. 60 IN A 198.51.100.7")}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			g := newTestPlugin(t, corpusPolicy, backend(reply{answer: tc.answer}, &asked))
			g.addrs.Store(g.policy.NoGlobals())
			if g.Ready() {
				t.Error("Ready() with no global address known")
			}
			tc.want.Qname, tc.want.Qtype = "app.example.com.", dns.TypeA
			rec := dnstest.NewRecorder(&test.ResponseWriter{})
			if _, err := g.ServeDNS(context.Background(), rec, tc.want.Msg()); err != nil {
				t.Fatal(err)
			}
			if err := test.SortAndCheck(rec.Msg, tc.want); err != nil {
				t.Errorf("%v\n%s", err, rec.Msg)
			}
		})
	}
}

func TestRegistryAtTheApexIsNodata(t *testing.T) {
	var asked []string
	rep := reply{answer: []dns.RR{test.TXT(`example.com. 30 IN TXT "\"heritage=external-dns,external-dns/owner=default\""`)}}
	g := newTestPlugin(t, v4only, backend(rep, &asked))
	tc := test.Case{Qname: "example.com.", Qtype: dns.TypeTXT, Ns: []dns.RR{test.SOA(zoneSOA)}}
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := g.ServeDNS(context.Background(), rec, tc.Msg()); err != nil {
		t.Fatal(err)
	}
	if err := test.SortAndCheck(rec.Msg, tc); err != nil {
		t.Errorf("%v\n%s", err, rec.Msg)
	}
}

func TestTransferEnvelopesAreRewritten(t *testing.T) {
	var asked []string
	soa := test.SOA(zoneSOA)
	rep := reply{answer: []dns.RR{soa, test.A("app.example.com. 30 IN A 192.168.0.51"), test.TXT(`a-app.example.com. 30 IN TXT "heritage=external-dns"`), soa}}
	g := newTestPlugin(t, v4only, backend(rep, &asked))
	req := new(dns.Msg)
	req.SetAxfr("example.com.")
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := g.ServeDNS(context.Background(), rec, req); err != nil {
		t.Fatal(err)
	}
	want := []dns.RR{soa, test.A("app.example.com. 900 IN A 203.0.113.10"), soa}
	if err := test.Section(test.Case{Answer: want}, test.Answer, rec.Msg.Answer); err != nil {
		t.Errorf("%v\n%s", err, rec.Msg)
	}
	if len(asked) != 1 {
		t.Errorf("a transfer asked the backend %v, want only the transfer", asked)
	}
}
