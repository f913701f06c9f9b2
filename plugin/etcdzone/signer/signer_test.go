package signer

import (
	"testing"
	"time"

	"github.com/miekg/dns"
)

// keySets are the key sets the signer takes, made in a test's directory.
var keySets = []struct {
	name  string
	flags []uint16
	alg   uint8
}{
	{"CSK ECDSAP256SHA256", []uint16{257}, dns.ECDSAP256SHA256},
	{"KSK+ZSK ECDSAP256SHA256", []uint16{257, 256}, dns.ECDSAP256SHA256},
	{"CSK ED25519", []uint16{257}, dns.ED25519},
	{"KSK+ZSK ED25519", []uint16{257, 256}, dns.ED25519},
}

func makeKeys(t testing.TB, flags []uint16, alg uint8) []*Key {
	dir := t.TempDir()
	var keys []*Key
	for i, f := range flags {
		keys = append(keys, writeKey(t, dir, "example.com.", f, alg, time.Now().Add(-time.Duration(len(flags)-i)*time.Hour)))
	}
	return keys
}

// TestSignFull signs testZone with each key set, NSEC3 and NSEC, and has
// BIND's dnssec-verify check the whole zone.
func TestSignFull(t *testing.T) {
	for _, ks := range keySets {
		for _, nsec := range []bool{false, true} {
			name := ks.name + " NSEC3"
			if nsec {
				name = ks.name + " NSEC"
			}
			t.Run(name, func(t *testing.T) {
				s := newSigned(t, makeKeys(t, ks.flags, ks.alg), Options{NSEC: nsec}, time.Now(), testZone)
				dnssecVerify(t, s)
			})
		}
	}
}

// TestLookups checks what an answer with DO takes from the signer: an
// authoritative RRset's signatures (none for a delegation's NS or glue),
// the denial record of a name (NODATA) and of an empty non-terminal, and
// the record covering a name that does not exist; with NSEC3 and NSEC.
func TestLookups(t *testing.T) {
	keys := makeKeys(t, []uint16{257}, dns.ECDSAP256SHA256)
	for _, nsec := range []bool{false, true} {
		s := newSigned(t, keys, Options{NSEC: nsec}, time.Now(), testZone)
		if len(s.RRSIGs("APP.example.com", dns.TypeA)) != 1 {
			t.Errorf("NSEC=%v: no RRSIG of app.example.com. A", nsec)
		}
		for _, q := range []struct {
			name  string
			qtype uint16
		}{{"lab.example.com.", dns.TypeNS}, {"ns.lab.example.com.", dns.TypeA}, {"app.example.com.", dns.TypeMX}} {
			if sigs := s.RRSIGs(q.name, q.qtype); len(sigs) != 0 {
				t.Errorf("NSEC=%v: %s %s signed: %v", nsec, q.name, dns.TypeToString[q.qtype], sigs)
			}
		}
		for _, name := range []string{"app.example.com.", "lab.example.com."} {
			d := s.Denial(name)
			if len(d) != 2 || !matches(d[0], name) {
				t.Errorf("NSEC=%v: denial of %s: %v", nsec, name, d)
			}
		}
		if d := s.Denial("b.example.com."); nsec != (len(d) == 0) {
			t.Errorf("NSEC=%v: denial of the empty non-terminal b.example.com.: %v", nsec, d)
		}
		if d := s.Denial("ns.lab.example.com."); len(d) != 0 {
			t.Errorf("NSEC=%v: glue in the chain: %v", nsec, d)
		}
		for _, name := range []string{"nothing.example.com.", "zzz.example.com.", "a.example.com."} {
			c := s.Cover(name)
			if len(c) != 2 || !covers(c[0], name) {
				t.Errorf("NSEC=%v: cover of %s: %v", nsec, name, c)
			}
		}
	}
}

// matches reports whether the denial record rr is name's.
func matches(rr dns.RR, name string) bool {
	if x, ok := rr.(*dns.NSEC3); ok {
		return x.Match(name)
	}
	return rr.Header().Name == name
}

// covers reports whether the denial record rr proves that name does not
// exist.
func covers(rr dns.RR, name string) bool {
	switch x := rr.(type) {
	case *dns.NSEC3:
		return x.Cover(name)
	case *dns.NSEC:
		owner, next, n := orderKey(x.Hdr.Name), orderKey(x.NextDomain), orderKey(name)
		return owner < n && (n < next || next <= owner)
	}
	return false
}
