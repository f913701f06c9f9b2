package test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miekg/dns"
)

var propertySeed = flag.Uint64("property.seed", 1, "seed of TestPropertyExternalViewsLeakNothing's record sets and queries")

// propertyRounds is how many random record sets the property test serves.
const propertyRounds = 8

// TestPropertyExternalViewsLeakNothing writes random record sets into etcd
// in external-dns's format (addresses internal, mapped, public and
// IPv4-mapped; CNAMEs into the zone, to hidden names and out of it; TXT;
// ownership records) and asks both external views of viewsCorefile random
// questions: every name, its ancestors up to the apex, its ownership record
// names and wildcards, every type, over UDP or TCP. No reply may show an
// internal address, a hidden name or an ownership record, and every name of
// the zone is answered NOERROR or NXDOMAIN; the internal view, asked the
// same, must show such records (else the questions miss the data). The
// record sets and queries are drawn from -property.seed (logged), so a
// failure can be replayed.
func TestPropertyExternalViewsLeakNothing(t *testing.T) {
	t.Parallel()
	t.Logf("seed %d (replay: go test -run %s -args -property.seed=%d)", *propertySeed, t.Name(), *propertySeed)
	rng := rand.New(rand.NewPCG(*propertySeed, 0x676c6f62))
	c, etcd := startViews(t, directives{})
	queries, internalLeaks := 0, 0
	for round := range propertyRounds {
		records := randomRecords(rng)
		if _, err := etcd.Client().Delete(context.Background(), externaldns.DefaultPrefix, clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
		putRecords(t, etcd, records...)
		for _, name := range questionNames(records) {
			for _, qtype := range allTypes {
				if rng.IntN(2) == 0 { // half of the questions: the rounds cover the rest
					continue
				}
				network := networks[rng.IntN(len(networks))]
				q := dns.Question{Name: name, Qtype: qtype, Qclass: dns.ClassINET}
				for view, p := range viewPolicies {
					r := query(t, network, c.Addr(view), name, qtype)
					queries++
					checkLeak(t, p, view, q, r)
					if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
						t.Errorf("round %d, %s view, %s %s over %s: %s", round, view, name, dns.TypeToString[qtype], network, dns.RcodeToString[r.Rcode])
					}
				}
				if viewPolicies["external"].Check(query(t, network, c.Addr("internal"), name, qtype)) != nil {
					internalLeaks++
				}
			}
		}
		if t.Failed() {
			t.Fatalf("round %d failed; its records:\n%s", round, describe(records))
		}
	}
	t.Logf("%d queries; %d answers of the internal view to the same questions show what the external view must not", queries, internalLeaks)
	if internalLeaks == 0 {
		t.Error("the internal view showed nothing the external one must hide: the questions miss the data")
	}
}

// Label pools of the random record sets: first labels, and the labels of
// the names between them and the zone, among which are the hidden names of
// viewsCorefile (secret.example.com, db.svc.example.com).
var (
	leafLabels   = []string{"app", "db", "web", "api", "x", "secret", "a-app", "mail"}
	parentLabels = []string{"", "", "svc.", "secret.", "team.", "x.secret.", "db.svc.", "k8s.team."}
)

// randomRecords returns 5 to 24 record sets of distinct names as
// external-dns writes them, most with their ownership records.
func randomRecords(rng *rand.Rand) []externaldns.Record {
	var names []string
	for range 5 + rng.IntN(20) {
		name := leafLabels[rng.IntN(len(leafLabels))] + "." + parentLabels[rng.IntN(len(parentLabels))] + "example.com"
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	var records []externaldns.Record
	for i, name := range names {
		var r externaldns.Record
		switch rng.IntN(6) {
		case 0, 1:
			r = a(name, pick(rng, v4Pool)...)
		case 2:
			r = aaaa(name, pick(rng, v6Pool)...)
		case 3: // into the zone (an earlier name: no loop), maybe to a hidden name, or out of it
			targets := append(names[:i:i], "edge.example.net", "www.example.net", "db.svc.example.com")
			r = cname(name, targets[rng.IntN(len(targets))])
		case 4:
			r = txt(name, fmt.Sprintf("text %d", rng.IntN(100)))
		case 5:
			r = a(name, "198.51.100.200")
		}
		if rng.IntN(4) == 0 {
			r.Resource = "" // no ownership record
		}
		records = append(records, r)
	}
	return records
}

// Address pools of the random record sets: internal, in a mapped range of
// viewsCorefile's external view, public; IPv4-mapped IPv6.
var (
	v4Pool = []string{"192.168.0.51", "10.0.0.9", "172.16.5.5", "100.64.1.1", "127.0.0.1", "169.254.1.1", "192.168.0.99", "10.20.0.42", "198.51.100.5", "203.0.113.77"}
	v6Pool = []string{"fd00::51", "fe80::1", "::1", "fd00:20::42", "2001:db8:5::1", "::ffff:192.168.0.51", "::ffff:198.51.100.9"}
)

// pick returns one to three addresses of pool.
func pick(rng *rand.Rand, pool []string) []string {
	out := make([]string, 1+rng.IntN(3))
	for i := range out {
		out[i] = pool[rng.IntN(len(pool))]
	}
	return out
}

// questionNames returns the names to ask about records: each name, its
// ancestors up to the apex, the names of its ownership records, a wildcard
// beside it and a name below it that does not exist.
func questionNames(records []externaldns.Record) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		n = dns.Fqdn(n)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, r := range records {
		name := dns.Fqdn(r.Name)
		add(name)
		add("a-" + name)
		add("txt-" + name)
		add("nope." + name)
		for off, end := 0, false; !end && dns.IsSubDomain("example.com.", name[off:]); off, end = dns.NextLabel(name, off) {
			add(name[off:])
			add("*." + name[off:])
		}
	}
	return out
}

// describe lists records, one per line, for a failure message.
func describe(records []externaldns.Record) string {
	var b strings.Builder
	for _, r := range records {
		fmt.Fprintf(&b, "  %s %s %v (ownership record: %v)\n", r.Name, r.Type, r.Targets, r.Resource != "")
	}
	return b.String()
}
