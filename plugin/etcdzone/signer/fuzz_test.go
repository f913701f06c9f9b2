package signer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// fuzzLabels are the labels the fuzzer builds owner names of: a wildcard,
// labels that look like one, escaped bytes and dots, upper case (plain and
// escaped), and the names of delegations and glue.
var fuzzLabels = []string{"*", "a", "B", `\000`, `\.`, "*x", "sub", "ns", `\065`, "_tcp", "xn--bcher-kva", `\255`}

// fuzzTypes are the types the fuzzer gives names: NS below the apex
// makes a delegation, DS a secure one.
var fuzzTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeNS, dns.TypeDS, dns.TypeCNAME, dns.TypeMX}

// FuzzSigner applies changes the input describes, three bytes each (a name
// of up to three labels of fuzzLabels below example.com, a type of
// fuzzTypes, and a record count, none deleting), in batches of up to four,
// to a signed zone, NSEC3 or NSEC as the first byte says. After each batch:
// the zone is what signing its records from scratch gives, the Diff leads
// from the records before to those after, each new signature verifies,
// and the denial chain, checked on its own, holds exactly the names it
// should, in order, each naming the next.
func FuzzSigner(f *testing.F) {
	keys := makeKeys(f, []uint16{257, 256}, dns.ED25519)
	f.Add([]byte{0, 1, 0, 1, 2, 3, 1, 3, 3, 1, 5, 4, 1})
	f.Add([]byte{1, 0x21, 3, 1, 0x21, 4, 1, 0x45, 0, 2, 0x21, 3, 0})
	f.Add([]byte{0, 0x10, 0, 1, 0x01, 2, 1, 0x12, 1, 1, 0x11, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 || len(data) > 100 {
			return
		}
		opts := Options{NSEC: data[0]&1 == 1}
		now := time.Now()
		s := newSigned(t, keys, opts, now, testZone)
		ops := data[1:]
		for len(ops) >= 3 {
			var batch []RRset
			for i := 0; i < 4 && len(ops) >= 3; i++ {
				batch = append(batch, fuzzChange(ops[:3]))
				ops = ops[3:]
			}
			before := s.Records()
			d, _ := s.Apply(batch, now)
			checkDiff(t, "batch", before, s.Records(), d)
			checkAsFresh(t, "batch", s, keys, opts, now)
			checkNewSignatures(t, s, d)
			checkChain(t, s)
		}
	})
}

// fuzzChange returns the change three bytes describe.
func fuzzChange(b []byte) RRset {
	var labels []string
	for i, n := 0, int(b[0]>>6); i < n; i++ {
		labels = append(labels, fuzzLabels[int(b[0]>>(2*i))%len(fuzzLabels)])
	}
	name := strings.Join(append(labels, "example.com."), ".")
	t := fuzzTypes[int(b[1])%len(fuzzTypes)]
	c := RRset{Name: name, Type: t}
	for i := range int(b[2] % 3) {
		var text string
		switch t {
		case dns.TypeA:
			text = fmt.Sprintf("192.0.2.%d", i+1)
		case dns.TypeAAAA:
			text = fmt.Sprintf("2001:db8::%d", i+1)
		case dns.TypeTXT:
			text = fmt.Sprintf("\"t%d\"", i)
		case dns.TypeNS:
			text = fmt.Sprintf("ns%d.%s", i, name)
		case dns.TypeDS:
			text = fmt.Sprintf("%d 13 2 3F0B9B5E3E6E1D7C6B4E5D2A1B0C9D8E7F6A5B4C3D2E1F0A9B8C7D6E5F4A3B2C", 1000+i)
		case dns.TypeCNAME:
			text = "app.example.com."
		case dns.TypeMX:
			text = fmt.Sprintf("%d mail.example.com.", 10*i)
		}
		rr, err := dns.NewRR(name + " 300 IN " + dns.TypeToString[t] + " " + text)
		if err == nil {
			c.RRs = append(c.RRs, rr)
		}
	}
	return c
}

// checkNewSignatures fails t unless each signature of d.Added verifies
// with s's DNSKEY of its tag over the RRset it covers.
func checkNewSignatures(t *testing.T, s *Signer, d Diff) {
	t.Helper()
	keys := map[uint16]*dns.DNSKEY{}
	for _, rr := range s.Records() {
		if k, ok := rr.(*dns.DNSKEY); ok {
			keys[k.KeyTag()] = k
		}
	}
	sets := map[string][]dns.RR{}
	for _, rr := range s.Records() {
		if rr.Header().Rrtype != dns.TypeRRSIG {
			k := rr.Header().Name + " " + dns.TypeToString[rr.Header().Rrtype]
			sets[k] = append(sets[k], rr)
		}
	}
	for _, rr := range d.Added {
		sig, ok := rr.(*dns.RRSIG)
		if !ok {
			continue
		}
		set := sets[sig.Hdr.Name+" "+dns.TypeToString[sig.TypeCovered]]
		if err := sig.Verify(keys[sig.KeyTag], set); err != nil {
			t.Fatalf("%s: %v over %v", sig, err, set)
		}
	}
}

// checkChain fails t unless s's denial records, read from its records
// alone, form the chain the zone needs: one record for each authoritative
// name (not below a delegation) and, for NSEC3, each empty non-terminal
// above one, none else, each naming the next in order and the last the
// first.
func checkChain(t *testing.T, s *Signer) {
	t.Helper()
	origin := s.Origin()
	owners := map[string]bool{}
	cuts := map[string]bool{}
	var denials []dns.RR
	for _, rr := range s.Records() {
		switch rr.Header().Rrtype {
		case dns.TypeNSEC, dns.TypeNSEC3:
			denials = append(denials, rr)
		case dns.TypeRRSIG:
		default:
			owners[rr.Header().Name] = true
			if rr.Header().Rrtype == dns.TypeNS && rr.Header().Name != origin {
				cuts[rr.Header().Name] = true
			}
		}
	}
	occluded := func(name string) bool {
		for p := name; p != origin; {
			p = parent(p)
			if cuts[p] {
				return true
			}
		}
		return false
	}
	want := map[string]bool{}
	for name := range owners {
		if occluded(name) {
			continue
		}
		want[name] = true
		if _, isNSEC := denials[0].(*dns.NSEC); !isNSEC {
			for p := name; p != origin; {
				p = parent(p)
				want[p] = true
			}
		}
	}
	var order []string // the chain's keys, as the records give them
	got := map[string]bool{}
	for _, rr := range denials {
		switch x := rr.(type) {
		case *dns.NSEC:
			got[x.Hdr.Name] = true
			order = append(order, x.Hdr.Name)
		case *dns.NSEC3:
			order = append(order, strings.ToUpper(strings.SplitN(x.Hdr.Name, ".", 2)[0]))
		}
	}
	if _, isNSEC := denials[0].(*dns.NSEC); !isNSEC {
		for name := range want {
			got[name] = slices.Contains(order, dns.HashName(name, dns.SHA1, 0, ""))
		}
		if len(order) != len(want) {
			t.Fatalf("%d NSEC3 records for %d names", len(order), len(want))
		}
	}
	for name := range want {
		if !got[name] {
			t.Fatalf("no denial record for %s", name)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("denial records for %v, want %v", got, want)
	}
	// Each record names the next in canonical (or hash) order.
	type link struct{ key, next, sortKey string }
	var links []link
	for _, rr := range denials {
		switch x := rr.(type) {
		case *dns.NSEC:
			links = append(links, link{x.Hdr.Name, x.NextDomain, orderKey(x.Hdr.Name)})
		case *dns.NSEC3:
			h := strings.ToUpper(strings.SplitN(x.Hdr.Name, ".", 2)[0])
			links = append(links, link{h, x.NextDomain, h})
		}
	}
	slices.SortFunc(links, func(a, b link) int { return strings.Compare(a.sortKey, b.sortKey) })
	for i, l := range links {
		if next := links[(i+1)%len(links)].key; l.next != next {
			t.Fatalf("%s names %s as next, want %s", l.key, l.next, next)
		}
	}
}
