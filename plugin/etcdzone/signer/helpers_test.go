package signer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// writeKey makes a key of zone with flags (256 ZSK, 257 KSK) and algorithm
// in dir, as dnssec-keygen writes one, created at created, and returns it.
func writeKey(t testing.TB, dir, zone string, flags uint16, alg uint8, created time.Time) *Key {
	t.Helper()
	key := &dns.DNSKEY{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600}, Flags: flags, Protocol: 3, Algorithm: alg}
	priv, err := key.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(dir, fmt.Sprintf("K%s+%03d+%05d", zone, alg, key.KeyTag()))
	if err := os.WriteFile(prefix+".key", []byte(key.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := key.PrivateKeyString(priv) + "Created: " + created.UTC().Format("20060102150405") + "\n"
	if err := os.WriteFile(prefix+".private", []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := ReadKey(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testZone is a zone with what the signer must tell apart: the apex, hosts,
// a wildcard, an empty non-terminal (b.example.com, above a.b), a secure
// delegation (DS) with glue, and an insecure one with glue below it.
const testZone = `
example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 2000000010 3600 600 1209600 300
example.com. 3600 IN NS ns1.example.net.
example.com. 3600 IN NS ns2.example.net.
example.com. 300 IN A 203.0.113.10
app.example.com. 300 IN A 203.0.113.10
app.example.com. 300 IN AAAA 2001:db8::10
www.example.com. 300 IN CNAME app.example.com.
*.apps.example.com. 300 IN A 203.0.113.10
a.b.example.com. 300 IN TXT "deep"
info.example.com. 300 IN TXT "hello" "world"
lab.example.com. 3600 IN NS ns.lab.example.com.
lab.example.com. 3600 IN DS 12345 13 2 3F0B9B5E3E6E1D7C6B4E5D2A1B0C9D8E7F6A5B4C3D2E1F0A9B8C7D6E5F4A3B2C
ns.lab.example.com. 3600 IN A 203.0.113.53
ext.example.com. 3600 IN NS ns.ext.example.com.
ns.ext.example.com. 3600 IN A 203.0.113.54
deep.ns.ext.example.com. 3600 IN A 203.0.113.55
`

// parseZone reads zone-file text with origin example.com.
func parseZone(t testing.TB, text string) []dns.RR {
	t.Helper()
	zp := dns.NewZoneParser(strings.NewReader(text), "example.com.", "")
	var rrs []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	return rrs
}

// newSigned returns a signer of example.com with keys, loaded with text.
func newSigned(t testing.TB, keys []*Key, opts Options, now time.Time, text string) *Signer {
	t.Helper()
	s, err := New("example.com.", keys, opts, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(Sets(parseZone(t, text)), now); err != nil {
		t.Fatal(err)
	}
	return s
}

// dnssecVerify writes s's zone to a file and runs BIND's dnssec-verify
// on it (at the current time), failing t with its output unless it passes.
func dnssecVerify(t testing.TB, s *Signer) {
	t.Helper()
	verify := prereq.Program(t, "dnssec-verify", "bind9-utils")
	file := filepath.Join(t.TempDir(), "zone.db")
	var b strings.Builder
	for _, rr := range s.Records() {
		b.WriteString(rr.String() + "\n")
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-o", s.Origin(), file}
	if s.zsks()[0].KSK() {
		// A combined signing key: no key without the KSK flag.
		args = append([]string{"-z"}, args...)
	}
	out, err := exec.Command(verify, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("dnssec-verify: %v\n%s\nzone:\n%s", err, out, b.String())
	}
}
