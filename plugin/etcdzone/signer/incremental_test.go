package signer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// change is one step of TestIncremental: RRsets in zone-file text, and
// owner/type pairs deleted.
type change struct {
	what    string
	set     string
	deleted []RRset
}

// incrementalChanges touch each part of the chain: a name added, a type
// and then the name deleted, empty non-terminals made and gone, a
// delegation over existing names added and one removed (its glue becomes
// authoritative), the SOA's negative TTL, a wildcard gone.
var incrementalChanges = []change{
	{what: "host added", set: "new.example.com. 300 IN A 203.0.113.11"},
	{what: "type deleted", deleted: []RRset{{Name: "app.example.com.", Type: dns.TypeAAAA}}},
	{what: "name deleted", deleted: []RRset{{Name: "app.example.com.", Type: dns.TypeA}}},
	{what: "empty non-terminals made", set: "x.y.z.example.com. 300 IN TXT \"deep\""},
	{what: "empty non-terminal gone", deleted: []RRset{{Name: "a.b.example.com.", Type: dns.TypeTXT}}},
	{what: "host below a future delegation", set: "h.sub.example.com. 300 IN A 203.0.113.12"},
	{what: "delegation over it", set: "sub.example.com. 3600 IN NS ns.sub.example.com.\nns.sub.example.com. 3600 IN A 203.0.113.13"},
	{what: "delegation removed", deleted: []RRset{{Name: "lab.example.com.", Type: dns.TypeNS}, {Name: "lab.example.com.", Type: dns.TypeDS}}},
	{what: "SOA changed", set: "example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 2000000020 3600 600 1209600 60"},
	{what: "wildcard gone", deleted: []RRset{{Name: "*.apps.example.com.", Type: dns.TypeA}}},
	{what: "DS added to an insecure delegation", set: "ext.example.com. 3600 IN DS 54321 13 2 3F0B9B5E3E6E1D7C6B4E5D2A1B0C9D8E7F6A5B4C3D2E1F0A9B8C7D6E5F4A3B2C"},
}

// TestIncremental applies incrementalChanges one by one, with NSEC3 and
// NSEC: after each, the zone is what signing its records from scratch
// gives (the same denial chain and the same RRsets signed, by the same
// keys), the Diff turns the signer's records before into those after, and
// dnssec-verify passes. A host added changes a few records, not the zone.
func TestIncremental(t *testing.T) {
	for _, nsec := range []bool{false, true} {
		t.Run(fmt.Sprintf("NSEC=%v", nsec), func(t *testing.T) {
			keys := makeKeys(t, []uint16{257, 256}, dns.ECDSAP256SHA256)
			now := time.Now()
			s := newSigned(t, keys, Options{NSEC: nsec}, now, testZone)
			for _, c := range incrementalChanges {
				changes := append(Sets(parseZone(t, c.set)), c.deleted...)
				before := s.Records()
				d, err := s.Apply(changes, now)
				if err != nil {
					t.Fatalf("%s: %v", c.what, err)
				}
				checkDiff(t, c.what, before, s.Records(), d)
				checkAsFresh(t, c.what, s, keys, Options{NSEC: nsec}, now)
				if c.what == "host added" && len(d.Added) > 6 {
					t.Errorf("a host added gave %d records:\n%v", len(d.Added), d.Added)
				}
			}
			dnssecVerify(t, s)
		})
	}
}

// checkDiff fails t unless before, less d.Removed, plus d.Added, is after
// (as multisets of records; the records a change gives the signer itself
// are not the signer's to report).
func checkDiff(t *testing.T, what string, before, after []dns.RR, d Diff) {
	t.Helper()
	count := map[string]int{}
	for _, rr := range ownRecords(before) {
		count[rr.String()]++
	}
	for _, rr := range d.Removed {
		count[rr.String()]--
	}
	for _, rr := range d.Added {
		count[rr.String()]++
	}
	for _, rr := range ownRecords(after) {
		count[rr.String()]--
	}
	for rr, n := range count {
		if n != 0 {
			t.Errorf("%s: the diff is off by %d for %s", what, n, rr)
		}
	}
}

// ownRecords returns the records of rrs the signer makes.
func ownRecords(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if ownType(rr.Header().Rrtype) {
			out = append(out, rr)
		}
	}
	return out
}

// checkAsFresh fails t unless s's zone has the shape (see shape) of a
// signer given s's records from scratch.
func checkAsFresh(t testing.TB, what string, s *Signer, keys []*Key, opts Options, now time.Time) {
	t.Helper()
	var given []dns.RR
	for _, rr := range s.Records() {
		if !ownType(rr.Header().Rrtype) {
			given = append(given, rr)
		}
	}
	fresh, err := New(s.Origin(), keys, opts, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Apply(Sets(given), now); err != nil {
		t.Fatal(err)
	}
	got, want := shape(s), shape(fresh)
	if !slices.Equal(got, want) {
		t.Errorf("%s: the zone differs from one signed from scratch:\n%s", what, lineDiff(got, want))
	}
}

// shape returns s's records as sorted text, each RRSIG as its owner, the
// type it covers and its key tag (a signature's bytes and times vary).
func shape(s *Signer) []string {
	var out []string
	for _, rr := range s.Records() {
		if sig, ok := rr.(*dns.RRSIG); ok {
			out = append(out, fmt.Sprintf("%s RRSIG %s %d", sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], sig.KeyTag))
			continue
		}
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// lineDiff returns the lines only in got (+) and only in want (-).
func lineDiff(got, want []string) string {
	var b strings.Builder
	for _, l := range got {
		if !slices.Contains(want, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}
