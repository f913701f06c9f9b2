package outside

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestNew checks what the constructor adds to its options: the default
// internal ranges when none are given, and the maps most specific first.
func TestNew(t *testing.T) {
	p := New(Options{TTL: -1, Maps: []Map{mapOf("10.1.0.0/16", "198.51.0.0/16"), mapOf("10.1.2.3/32", "192.0.2.1/32")}})
	for _, a := range []string{"10.9.9.9", "192.168.0.51", "fd00::1", "::1"} {
		if !p.IsInternal(netip.MustParseAddr(a)) {
			t.Errorf("%s is not internal by default", a)
		}
	}
	if rules := p.Rules(p.NoGlobals()); !strings.Contains(rules, "\nmap 10.1.2.3/32 192.0.2.1/32\nmap 10.1.0.0/16 198.51.0.0/16\n") {
		t.Errorf("want the maps most specific first:\n%s", rules)
	}
	// The most specific map wins; a single address takes everything.
	g := p.NoGlobals()
	for in, want := range map[string]string{"10.1.2.3": "192.0.2.1", "10.1.7.9": "198.51.7.9"} {
		m := new(dns.Msg)
		m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "a.example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: netip.MustParseAddr(in).AsSlice()}}
		out, err := p.Rewrite(m, g, &Tally{})
		if err != nil || len(out.Answer) != 1 || out.Answer[0].(*dns.A).A.String() != want {
			t.Errorf("%s: %v %v, want %s", in, out, err, want)
		}
	}
}
