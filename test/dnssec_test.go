package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestDNSSECSignsRewrittenAnswers proves globaladdr's place below dnssec:
// the external view's answers are signed after the rewrite, so their
// signatures verify with the block's key.
func TestDNSSECSignsRewrittenAnswers(t *testing.T) {
	t.Parallel()
	key, keyFile := writeKey(t, "example.com.")
	c, _ := startViews(t, directives{external: "dnssec example.com {\n\t\tkey file " + keyFile + "\n\t}"},
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("mixed.example.com", "192.168.0.61", "198.51.100.20"),
		cname("www.example.com", "app.example.com"),
	)
	// Only the covered type, labels and signer of an RRSIG are compared
	// here; verifySignatures checks the signatures themselves.
	sig := func(name, covered string, ttl int) dns.RR {
		return test.RRSIG(fmt.Sprintf("%s %d IN RRSIG %s 13 3 %d 20300101000000 20200101000000 1 example.com. 3q2+7w==", name, ttl, covered, ttl))
	}
	opt := []dns.RR{test.OPT(4096, true)}
	tests := []struct {
		name string
		tc   test.Case
	}{
		{"A rewritten to the global address", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA, Do: true,
			Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10"), sig("app.example.com.", "A", 900)},
			Extra:  opt,
		}},
		{"AAAA rewritten to the global address", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA, Do: true,
			Answer: []dns.RR{test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10"), sig("app.example.com.", "AAAA", 900)},
			Extra:  opt,
		}},
		// The RRset keeps the public record's TTL beside the rewritten
		// one's; the RRSIG takes either.
		{"A rewritten beside a public address", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA, Do: true,
			Answer: []dns.RR{
				test.A("mixed.example.com. 300 IN A 203.0.113.10"), // one TTL per RRset: the lowest
				test.A("mixed.example.com. 300 IN A 198.51.100.20"),
				sig("mixed.example.com.", "A", 303),
			},
			Extra: opt,
		}},
		{"CNAME chain ending in a rewritten A", test.Case{
			Qname: "www.example.com.", Qtype: dns.TypeA, Do: true,
			Answer: []dns.RR{
				test.CNAME("www.example.com. 300 IN CNAME app.example.com."),
				sig("www.example.com.", "CNAME", 300),
				test.A("app.example.com. 900 IN A 203.0.113.10"),
				sig("app.example.com.", "A", 900),
			},
			Extra: opt,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCase(t, c.Addr("external"), tt.tc, func(t *testing.T, reply *dns.Msg) {
				verifySignatures(t, key, reply.Answer)
			})
		})
	}
}

// verifySignatures fails t unless every RRSIG in rrs is valid now and
// verifies, with key, the RRset of rrs it covers.
func verifySignatures(t *testing.T, key *dns.DNSKEY, rrs []dns.RR) {
	t.Helper()
	for _, rr := range rrs {
		sig, ok := rr.(*dns.RRSIG)
		if !ok {
			continue
		}
		var rrset []dns.RR
		for _, r := range rrs {
			if r.Header().Rrtype == sig.TypeCovered && r.Header().Name == sig.Hdr.Name {
				rrset = append(rrset, r)
			}
		}
		if err := sig.Verify(key, rrset); err != nil {
			t.Errorf("RRSIG of %s %s does not verify: %v\n%v", sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], err, rrset)
		}
		if !sig.ValidityPeriod(time.Now()) {
			t.Errorf("RRSIG of %s %s is not valid now: %v", sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], sig)
		}
	}
}

// writeKey generates an ECDSA P-256 signing key for zone and writes it into
// a temporary directory as dnssec-keygen does: K<zone>+013+<tag>.key and
// .private. It returns the public key and the files' common path, which is
// what the dnssec plugin's `key file` takes.
func writeKey(t testing.TB, zone string) (*dns.DNSKEY, string) {
	t.Helper()
	key := &dns.DNSKEY{
		Hdr:       dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags:     dns.ZONE | dns.SEP,
		Protocol:  3,
		Algorithm: dns.ECDSAP256SHA256,
	}
	priv, err := key.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), fmt.Sprintf("K%s+%03d+%05d", zone, key.Algorithm, key.KeyTag()))
	if err := os.WriteFile(base+".key", []byte(key.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".private", []byte(key.PrivateKeyString(priv)), 0o600); err != nil {
		t.Fatal(err)
	}
	return key, base
}
