package test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/oracle"
)

// TestDifferentialBIND holds the external view's answers against BIND's, on
// BIND's copy of the view by transfer: for every name of oracle.Zone and
// oracle.Keys (SRV and MX records), its ancestors, a name below it, names
// under the wildcards and a missing name, over A, AAAA, CNAME, TXT, NS, SOA,
// MX and SRV, both give the same rcode, AA bit, Answer records, SOA and NS
// records in Authority, and glue in referrals (sibling glue too).
func TestDifferentialBIND(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, oracle.Zone...)
	putKeys(t, etcd, oracle.Keys)
	oracle.CheckView(t, etcd.Endpoint())
}

// TestDifferentialBINDTwoUplinks is TestDifferentialBIND with two global
// IPv4 addresses: every rewritten A RRset holds both, in the answers and in
// BIND's copy alike.
func TestDifferentialBINDTwoUplinks(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, oracle.Zone...)
	oracle.CheckView(t, etcd.Endpoint(), "203.0.113.10", "203.0.113.11", "2001:db8::10")
}

// TestDifferentialBINDRandom is TestDifferentialBIND on random zones, from
// fixed seeds.
func TestDifferentialBINDRandom(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			etcd := startEtcd(t)
			putRecords(t, etcd, randomZone(rand.New(rand.NewPCG(seed, 1)), 60)...)
			oracle.CheckView(t, etcd.Endpoint())
		})
	}
}

// randomZone returns n records under example.com with names of one to three
// labels from a small alphabet (so that names share ancestors), some of them
// wildcards: internal, public and mapped addresses, TXT records, and CNAMEs
// to names made before (no loops), to names that may not exist and out of
// the zone. A name holds a CNAME or other records, never both.
func randomZone(r *rand.Rand, n int) []externaldns.Record {
	labels := []string{"a", "b", "c", "d", "*", "lan", "lab"}
	name := func() string {
		s := "example.com"
		for range 1 + r.IntN(3) {
			l := labels[r.IntN(len(labels))]
			if l == "*" && s != "example.com" && r.IntN(2) == 0 {
				l = "e" // a wildcard label only leftmost, mostly
			}
			s = l + "." + s
		}
		return s
	}
	var records []externaldns.Record
	kinds := map[string]string{} // the kind of records at each name: "CNAME" or "data"
	var names []string
	for len(records) < n {
		owner := name()
		var rec externaldns.Record
		switch k := r.IntN(6); {
		case k == 0:
			target := fmt.Sprintf("t%d.example.org", r.IntN(3))
			if len(names) > 0 && r.IntN(3) > 0 {
				target = names[r.IntN(len(names))]
			} else if r.IntN(2) == 0 {
				target = name()
			}
			rec = externaldns.Record{Name: owner, Type: "CNAME", Targets: []string{target}}
		case k == 1:
			rec = externaldns.Record{Name: owner, Type: "AAAA", Targets: []string{fmt.Sprintf("fd00::%x", r.IntN(256))}}
		case k == 2:
			rec = externaldns.Record{Name: owner, Type: "TXT", Targets: []string{fmt.Sprintf("t%d", r.IntN(9))}}
		default:
			rec = externaldns.Record{Name: owner, Type: "A", Targets: []string{[]string{"192.168.0.", "192.168.1.", "198.51.100."}[r.IntN(3)] + fmt.Sprint(1+r.IntN(250))}}
		}
		kind := "data"
		if rec.Type == "CNAME" {
			kind = "CNAME"
		}
		if prev, ok := kinds[owner]; (ok && (prev != kind || kind == "CNAME")) || owner == "example.com" && kind == "CNAME" {
			continue
		}
		if r.IntN(3) == 0 {
			rec.Resource = "ingress/default/" + owner
		}
		kinds[owner] = kind
		names = append(names, owner)
		records = append(records, rec)
	}
	return records
}
