package outside

import (
	"net/netip"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

const signed = `example.com. 30 IN RRSIG A 13 3 30 20300101000000 20200101000000 1234 example.com. c2lnbmF0dXJl`

// rewriteCorpus is a set of replies exercising every action.
func rewriteCorpus() []*dns.Msg {
	msgs := [][]dns.RR{
		{test.A("app.example.com. 30 IN A 192.168.0.51"), test.A("app.example.com. 30 IN A 192.168.0.52")},
		{test.A("app.example.com. 30 IN A 198.51.100.1"), test.AAAA("app.example.com. 30 IN AAAA fd00::1")},
		{test.CNAME("www.example.com. 30 IN CNAME x.secret.example.com."), test.A("x.secret.example.com. 30 IN A 10.0.0.1")},
		{test.TXT(`a-app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`), test.TXT(`app.example.com. 30 IN TXT "hello"`)},
		{test.A("example.com. 30 IN A 192.168.0.51"), test.RRSIG(signed)},
		{test.A("a.example.com. 30 IN A 192.168.7.7"), test.AAAA("a.example.com. 30 IN AAAA fd00:1::7")},
	}
	var out []*dns.Msg
	for _, answer := range msgs {
		m := new(dns.Msg)
		m.SetQuestion("app.example.com.", dns.TypeA)
		m.Response = true
		m.Answer = answer
		m.Extra = answer
		out = append(out, m)
	}
	return out
}

// corpusPolicy is the view of a Corefile's globaladdr 203.0.113.10
// 203.0.113.11 2001:db8::10 { ttl 60; map 192.168.7.0/24 198.51.100.0/24;
// map fd00:1::/32 2001:db8:1::/32; hide secret.example.com }.
func corpusPolicy() (*Policy, *Globals) {
	return at(Options{
		TTL:  60,
		Maps: []Map{mapOf("192.168.7.0/24", "198.51.100.0/24"), mapOf("fd00:1::/32", "2001:db8:1::/32")},
		Hide: []string{"secret.example.com."},
	}, "203.0.113.10", "203.0.113.11", "2001:db8::10")
}

// v4only is the view of globaladdr 203.0.113.10 { ttl 900 }.
func v4only() (*Policy, *Globals) { return at(Options{TTL: 900}, "203.0.113.10") }

// at returns the policy of o, and its state at the global addresses addrs.
func at(o Options, addrs ...string) (*Policy, *Globals) {
	p := New(o)
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	return p, p.Globals(as)
}

// mapOf is the map property "map FROM TO".
func mapOf(from, to string) Map {
	return Map{From: netip.MustParsePrefix(from), To: netip.MustParsePrefix(to)}
}

func TestRewriteIsIdempotent(t *testing.T) {
	p, g := corpusPolicy()
	for _, m := range rewriteCorpus() {
		once, err := p.Rewrite(m, g, &Tally{})
		if err != nil {
			t.Fatal(err)
		}
		twice, err := p.Rewrite(once, g, &Tally{})
		if err != nil {
			t.Fatal(err)
		}
		if twice != once {
			t.Errorf("rewriting a rewritten reply changed it:\n%s\n%s", once, twice)
		}
	}
}

func TestRewriteRemovesStaleSignatures(t *testing.T) {
	p, g := v4only()
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeA)
	m.Answer = []dns.RR{test.A("example.com. 30 IN A 192.168.0.51"), test.RRSIG(signed)}
	out, err := p.Rewrite(m, g, &Tally{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Answer) != 1 || out.Answer[0].Header().Rrtype != dns.TypeA {
		t.Errorf("want only the rewritten A, its old signature removed; got %v", out.Answer)
	}
}

func TestRewritePassThroughDoesNotAllocate(t *testing.T) {
	p, g := corpusPolicy()
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeSRV)
	m.Answer = []dns.RR{test.SRV("example.com. 30 IN SRV 10 100 0 app.example.com.")}
	m.Extra = []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1"), test.AAAA("app.example.com. 30 IN AAAA 2001:db8::1"), test.TXT(`app.example.com. 30 IN TXT "hello"`)}
	allocs := testing.AllocsPerRun(100, func() {
		if out, _ := p.Rewrite(m, g, &Tally{}); out != m {
			t.Fatal("a reply with nothing internal was copied")
		}
	})
	if allocs != 0 {
		t.Errorf("pass-through allocates %v times, want 0", allocs)
	}
}
