package signer

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestZSKRollover rolls the ZSK over by files, as a Kubernetes Secret's
// update does: a new key in the directory is published at once and signs
// nothing until it has been published for PublishWait; then it signs the
// data; removing the old key's files unpublishes it. At each step every
// data signature is by a key that a resolver holding the DNSKEY set of
// the step before knows (no answer goes bogus), and dnssec-verify passes,
// also after a change in the middle of the rollover. A signer started
// while both keys are there signs with the older.
func TestZSKRollover(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-30 * time.Minute)
	ksk := writeKey(t, dir, "example.com.", 257, dns.ECDSAP256SHA256, base.Add(-2*time.Hour))
	old := writeKey(t, dir, "example.com.", 256, dns.ECDSAP256SHA256, base.Add(-time.Hour))
	opts := Options{KeyTTL: 600, PublishWait: 10 * time.Minute}
	keys, err := ReadKeys(dir, "example.com.")
	if err != nil {
		t.Fatal(err)
	}
	s := newSigned(t, keys, opts, base, testZone)
	checkSigners(t, "start", s, nil, ksk.Tag(), old.Tag())

	published := base.Add(time.Minute)
	fresh := writeKey(t, dir, "example.com.", 256, dns.ECDSAP256SHA256, published)
	cached := dnskeyTags(s)
	setKeys(t, s, dir, published)
	if got := dnskeyTags(s); len(got) != 3 {
		t.Fatalf("after the new key's files: DNSKEY tags %v, want 3", got)
	}
	checkSigners(t, "published", s, cached, ksk.Tag(), old.Tag())
	if _, err := s.Apply(Sets(parseZone(t, "mid.example.com. 300 IN A 203.0.113.30")), published.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	checkSigners(t, "change mid-rollover", s, cached, ksk.Tag(), old.Tag())
	dnssecVerify(t, s)

	restarted, err := New("example.com.", mustReadKeys(t, dir), opts, published)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restarted.Apply(Sets(parseZone(t, testZone)), published); err != nil {
		t.Fatal(err)
	}
	checkSigners(t, "restart mid-rollover", restarted, nil, ksk.Tag(), old.Tag())

	if s.Due(published.Add(opts.PublishWait - time.Second)) {
		t.Error("before PublishWait a refresh is due")
	}
	if d := s.Refresh(published.Add(opts.PublishWait - time.Second)); !d.Empty() {
		t.Errorf("before PublishWait the refresh changed %d records", len(d.Added))
	}
	if !s.Due(published.Add(opts.PublishWait)) {
		t.Error("once the new ZSK was published for PublishWait, no refresh is due")
	}
	cached = dnskeyTags(s)
	s.Refresh(published.Add(opts.PublishWait))
	checkSigners(t, "taken over", s, cached, ksk.Tag(), fresh.Tag())
	dnssecVerify(t, s)

	for _, ext := range []string{".key", ".private"} {
		if err := os.Remove(old.Prefix + ext); err != nil {
			t.Fatal(err)
		}
	}
	setKeys(t, s, dir, published.Add(opts.PublishWait+time.Minute))
	if got := dnskeyTags(s); len(got) != 2 || got[old.Tag()] {
		t.Errorf("after the old key's files went: DNSKEY tags %v", got)
	}
	checkSigners(t, "retired", s, nil, ksk.Tag(), fresh.Tag())
	dnssecVerify(t, s)
}

// TestZSKRolloverSameSecond rolls to a ZSK made in the same second as the
// old one (key files give the time to the second; a script may make both at
// once): the key seen later takes over all the same.
func TestZSKRolloverSameSecond(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-30 * time.Minute).Truncate(time.Second)
	ksk := writeKey(t, dir, "example.com.", 257, dns.ECDSAP256SHA256, base)
	old := writeKey(t, dir, "example.com.", 256, dns.ECDSAP256SHA256, base)
	opts := Options{KeyTTL: 600, PublishWait: 10 * time.Minute}
	s := newSigned(t, mustReadKeys(t, dir), opts, base, testZone)
	checkSigners(t, "start", s, nil, ksk.Tag(), old.Tag())
	fresh := writeKey(t, dir, "example.com.", 256, dns.ECDSAP256SHA256, base)
	published := base.Add(time.Minute)
	setKeys(t, s, dir, published)
	cached := dnskeyTags(s)
	s.Refresh(published.Add(opts.PublishWait))
	checkSigners(t, "taken over", s, cached, ksk.Tag(), fresh.Tag())
}

func mustReadKeys(t *testing.T, dir string) []*Key {
	t.Helper()
	keys, err := ReadKeys(dir, "example.com.")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// setKeys gives s the keys of dir at now.
func setKeys(t *testing.T, s *Signer, dir string, now time.Time) {
	t.Helper()
	if _, err := s.SetKeys(mustReadKeys(t, dir), now); err != nil {
		t.Fatal(err)
	}
}

// dnskeyTags returns the tags of s's DNSKEY set.
func dnskeyTags(s *Signer) map[uint16]bool {
	tags := map[uint16]bool{}
	for _, rr := range s.Records() {
		if k, ok := rr.(*dns.DNSKEY); ok {
			tags[k.KeyTag()] = true
		}
	}
	return tags
}

// checkSigners fails t unless the apex's key records are signed by ksk
// alone and everything else by zsk alone, with zsk in the DNSKEY set a
// resolver may hold (cached, unless nil) and in s's.
func checkSigners(t *testing.T, step string, s *Signer, cached map[uint16]bool, ksk, zsk uint16) {
	t.Helper()
	published := dnskeyTags(s)
	for _, rr := range s.Records() {
		sig, ok := rr.(*dns.RRSIG)
		if !ok {
			continue
		}
		want := zsk
		if sig.TypeCovered == dns.TypeDNSKEY || sig.TypeCovered == dns.TypeCDS || sig.TypeCovered == dns.TypeCDNSKEY {
			want = ksk
		}
		if sig.KeyTag != want {
			t.Fatalf("%s: %s %s signed by %d, want %d", step, sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], sig.KeyTag, want)
		}
		if !published[sig.KeyTag] || cached != nil && !cached[sig.KeyTag] {
			t.Fatalf("%s: %s %s signed by %d, unknown to a resolver holding %v (published %v)", step, sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], sig.KeyTag, cached, published)
		}
	}
}

// TestRefresh signs with a validity of 10 minutes, refreshed 4 minutes
// before expiry, with a minute of jitter: a refresh a minute later changes
// nothing; one 6 minutes later signs everything anew, every signature then
// valid for more than 4 minutes, their expiries spread.
func TestRefresh(t *testing.T) {
	opts := Options{Validity: 10 * time.Minute, Refresh: 4 * time.Minute, Jitter: time.Minute}
	start := time.Now()
	s := newSigned(t, makeKeys(t, []uint16{257}, dns.ED25519), opts, start, testZone)
	if s.Due(start.Add(time.Minute)) {
		t.Error("a minute later a refresh is due")
	}
	if d := s.Refresh(start.Add(time.Minute)); !d.Empty() {
		t.Errorf("a refresh a minute later changed %d records", len(d.Added))
	}
	later := start.Add(6*time.Minute + time.Second)
	if !s.Due(later) {
		t.Error("6 minutes later no refresh is due")
	}
	d := s.Refresh(later)
	expiries := map[uint32]bool{}
	sigs := 0
	for _, rr := range s.Records() {
		if sig, ok := rr.(*dns.RRSIG); ok {
			sigs++
			expiries[sig.Expiration] = true
			if int64(sig.Expiration) <= later.Add(opts.Refresh).Unix() {
				t.Errorf("after the refresh %s %s expires at %d", sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], sig.Expiration)
			}
		}
	}
	if len(d.Added) != sigs {
		t.Errorf("the refresh made %d signatures of %d", len(d.Added), sigs)
	}
	if len(expiries) < sigs/2 {
		t.Errorf("%d signatures expire at %d times: no jitter", sigs, len(expiries))
	}
	dnssecVerify(t, s)
}

// TestBadInput checks that the signer refuses what it cannot sign, naming
// it, and keeps the rest: a name outside the zone, a type it makes itself,
// a DS at the apex, a record of another owner in an RRset; and that New
// and SetKeys refuse key sets they can't use.
func TestBadInput(t *testing.T) {
	keys := makeKeys(t, []uint16{257}, dns.ECDSAP256SHA256)
	s := newSigned(t, keys, Options{}, time.Now(), testZone)
	other := parseZone(t, "b.example.com. 300 IN A 192.0.2.1")
	_, err := s.Apply([]RRset{
		{Name: "x.example.org.", Type: dns.TypeA},
		{Name: "example.com.", Type: dns.TypeDNSKEY},
		{Name: "example.com.", Type: dns.TypeDS},
		{Name: "a.example.com.", Type: dns.TypeA, RRs: append(parseZone(t, "a.example.com. 300 IN A 192.0.2.2"), other...)},
	}, time.Now())
	for _, want := range []string{`"x.example.org.": not a name of zone`, "example.com. DNSKEY", "example.com. DS", "a.example.com. A: 1 records left out"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if s.RRSIGs("a.example.com.", dns.TypeA) == nil {
		t.Error("the good record of a.example.com. A is not signed")
	}
	dnssecVerify(t, s)
	if _, err := New("example.com.", nil, Options{}, time.Now()); err == nil {
		t.Error("New without keys")
	}
	if _, err := New("example.com.", keys, Options{Validity: time.Hour, Refresh: time.Hour}, time.Now()); err == nil {
		t.Error("New with a refresh as long as the validity")
	}
	ed25519 := makeKeys(t, []uint16{257}, dns.ED25519)
	if _, err := s.SetKeys(append(ed25519, keys...), time.Now()); err == nil {
		t.Error("SetKeys with two algorithms")
	}
	if _, err := s.SetKeys(ed25519, time.Now()); err == nil || !strings.Contains(err.Error(), "changing algorithms is not supported") {
		t.Errorf("SetKeys with another algorithm: %v", err)
	}
	if _, err := New("example.org.", keys, Options{}, time.Now()); err == nil {
		t.Error("New with another zone's key")
	}
}
