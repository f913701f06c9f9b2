package zone

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/signer"

	"github.com/miekg/dns"
)

// TestSignedAnswer signs a version and checks what answers to queries with
// DO carry, by kind: each RRset its signature; NXDOMAIN the closest
// encloser's NSEC3, and those covering the next closer name and the
// wildcard; NODATA the name's NSEC3; a wildcard's expansion the wildcard's
// signature under the name asked and the NSEC3 covering the next closer
// name; DNSKEY from the signer. Without DO, no DNSSEC record.
func TestSignedAnswer(t *testing.T) {
	v := build(newTestIndex(t,
		"app.example.com. 300 IN A 203.0.113.10",
		"*.apps.example.com. 300 IN A 203.0.113.10",
		"x.y.example.com. 300 IN A 203.0.113.10",
	), nil)
	s := newTestSigner(t, v)
	for _, c := range []struct {
		name               string
		qtype              uint16
		rcode, sigs, nsec3 int
	}{
		{"app.example.com.", dns.TypeA, dns.RcodeSuccess, 1, 0},
		{"nothing.example.com.", dns.TypeA, dns.RcodeNameError, 4, 3}, // the SOA's and 3 NSEC3s' signatures
		{"app.example.com.", dns.TypeMX, dns.RcodeSuccess, 2, 1},
		{"y.example.com.", dns.TypeA, dns.RcodeSuccess, 2, 1}, // an empty non-terminal
		{"z.apps.example.com.", dns.TypeA, dns.RcodeSuccess, 2, 1},
		{"example.com.", dns.TypeDNSKEY, dns.RcodeSuccess, 1, 0},
	} {
		m := askSigned(v, s, c.name, c.qtype, true)
		sigs, nsec3 := 0, 0
		for _, rr := range append(m.Answer, m.Ns...) {
			switch rr := rr.(type) {
			case *dns.RRSIG:
				sigs++
				if c.name == "z.apps.example.com." && rr.TypeCovered == dns.TypeA && (rr.Hdr.Name != c.name || rr.Labels != 3) {
					t.Errorf("%s: the wildcard's signature %v", c.name, rr)
				}
			case *dns.NSEC3:
				nsec3++
			}
		}
		if m.Rcode != c.rcode || sigs != c.sigs || nsec3 != c.nsec3 {
			t.Errorf("%s %s: want %s, %d RRSIG, %d NSEC3; got\n%v", c.name, dns.TypeToString[c.qtype], dns.RcodeToString[c.rcode], c.sigs, c.nsec3, m)
		}
		if plain := askSigned(v, s, c.name, c.qtype, false); hasType(append(plain.Answer, plain.Ns...), dns.TypeRRSIG) || hasType(plain.Ns, dns.TypeNSEC3) {
			t.Errorf("%s %s without DO:\n%v", c.name, dns.TypeToString[c.qtype], plain)
		}
	}
}

// newTestSigner returns a signer of v's records with a new CSK.
func newTestSigner(t *testing.T, v *Version) *signer.Signer {
	t.Helper()
	dnskey := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: dns.ZONE | dns.SEP, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := dnskey.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(t.TempDir(), "Kexample.com.+013+00001")
	if err := os.WriteFile(prefix+".key", []byte(dnskey.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix+".private", []byte(dnskey.PrivateKeyString(priv)), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := signer.ReadKey(prefix)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New("example.com.", []*signer.Key{key}, signer.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rrs := v.Records()
	if _, err := s.Apply(signer.Sets(rrs[:len(rrs)-1]), time.Now()); err != nil {
		t.Fatal(err)
	}
	return s
}

// askSigned returns v's answer, signed as s, to name's records of qtype,
// with DO set or not.
func askSigned(v *Version, s *signer.Signer, name string, qtype uint16, do bool) *dns.Msg {
	req := new(dns.Msg).SetQuestion(name, qtype)
	req.SetEdns0(4096, do)
	state := request.Request{W: &test.ResponseWriter{}, Req: req}
	var m *dns.Msg
	if !v.FromSigner(state) {
		m = v.Answer(context.Background(), state, func(name string) bool { return dns.IsSubDomain("example.com.", name) })
	}
	return v.SignedAnswer(state, m, s)
}

// TestSignedReferral asks with DO for a name below a signed delegation, and
// for a CNAME whose target lies below it: both referrals carry the
// delegation's DS RRset and its signature, once (RFC 4035, 3.1.4).
func TestSignedReferral(t *testing.T) {
	idx := NewIndex(map[string][]dns.RR{
		"lab": {
			mustRR(t, "lab.example.com. 3600 IN NS ns.lab.example.com."),
			mustRR(t, "lab.example.com. 3600 IN DS 12345 13 2 0F1E2D3C4B5A69788796A5B4C3D2E1F00F1E2D3C4B5A69788796A5B4C3D2E1F0"),
		},
		"glue": {mustRR(t, "ns.lab.example.com. 3600 IN A 192.0.2.53")},
	})
	add(idx, "/key/www", "www.example.com.", []dns.RR{mustRR(t, "www.example.com. 300 IN CNAME host.lab.example.com.")}, nil)
	v := build(idx, nil, "lab.example.com.")
	s := newTestSigner(t, v)
	for _, name := range []string{"host.lab.example.com.", "www.example.com."} {
		m := askSigned(v, s, name, dns.TypeA, true)
		var ns, ds, dsSigs int
		for _, rr := range m.Ns {
			switch rr := rr.(type) {
			case *dns.NS:
				ns++
			case *dns.DS:
				ds++
			case *dns.RRSIG:
				if rr.TypeCovered == dns.TypeDS {
					dsSigs++
				}
			}
		}
		if ns != 1 || ds != 1 || dsSigs != 1 || len(m.Extra) == 0 {
			t.Errorf("%s: want the NS, DS and DS's RRSIG once in Authority, the glue in Additional; got\n%v", name, m)
		}
	}
}
