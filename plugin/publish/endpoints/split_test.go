package endpoints

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// hosts returns the endpoints of n hosts, each with an A record and, for
// every other one, an AAAA record.
func hosts(n int) []wire.Endpoint {
	var eps []wire.Endpoint
	for i := range n {
		name := fmt.Sprintf("h%05d.example.com", i)
		eps = append(eps, wire.Endpoint{DNSName: name, RecordType: "A", Targets: []string{"203.0.113.10"}, RecordTTL: 900})
		if i%2 == 0 {
			eps = append(eps, wire.Endpoint{DNSName: name, RecordType: "AAAA", Targets: []string{"2001:db8::10"}, RecordTTL: 900})
		}
	}
	return eps
}

// size returns the bytes of JSON the endpoints of part take in an object.
func size(t *testing.T, part []wire.Endpoint) int {
	t.Helper()
	b, err := json.Marshal(part)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestSplitNone(t *testing.T) {
	parts := Split(nil, 1000)
	if len(parts) != 1 || len(parts[0]) != 0 {
		t.Errorf("no endpoints: %d parts %v, want one empty part", len(parts), parts)
	}
}

func TestSplitOne(t *testing.T) {
	eps := hosts(10)
	parts := Split(eps, 1<<20)
	if len(parts) != 1 || !slices.EqualFunc(parts[0], eps, sameEndpoint) {
		t.Errorf("endpoints within the budget: %d parts, want one holding them all", len(parts))
	}
}

func TestSplit(t *testing.T) {
	const budget = 8 << 10
	eps := hosts(1000)
	parts := Split(eps, budget)
	if len(parts) < 2 || bits.OnesCount(uint(len(parts))) != 1 {
		t.Fatalf("%d parts, want a power of two above 1", len(parts))
	}
	if fewer := len(parts) / 2; maxSize(t, regroup(eps, fewer)) <= budget {
		t.Errorf("%d parts where %d hold the endpoints within the budget", len(parts), fewer)
	}
	var all []wire.Endpoint
	part := map[string]int{}
	for i, p := range parts {
		if s := size(t, p); s > budget {
			t.Errorf("part %d takes %d bytes, more than %d", i, s, budget)
		}
		for _, e := range p {
			if j, ok := part[e.DNSName]; ok && j != i {
				t.Errorf("%s is in parts %d and %d", e.DNSName, j, i)
			}
			part[e.DNSName] = i
		}
		if !slices.IsSortedFunc(p, compareEndpoints) {
			t.Errorf("part %d is not in the order of the endpoints", i)
		}
		all = append(all, p...)
	}
	slices.SortFunc(all, compareEndpoints)
	if !slices.EqualFunc(all, eps, sameEndpoint) {
		t.Errorf("the parts hold %d endpoints, not the %d given", len(all), len(eps))
	}
}

func TestSplitChangesOnePart(t *testing.T) {
	const budget = 8 << 10
	eps := hosts(1000)
	before := Split(eps, budget)
	added := append(slices.Clone(eps), wire.Endpoint{DNSName: "added.example.com", RecordType: "A", Targets: []string{"198.51.100.7"}, RecordTTL: 60})
	slices.SortFunc(added, compareEndpoints)
	after := Split(added, budget)
	if len(after) != len(before) {
		t.Fatalf("one name more: %d parts, were %d", len(after), len(before))
	}
	var changed []int
	for i := range before {
		if !slices.EqualFunc(before[i], after[i], sameEndpoint) {
			changed = append(changed, i)
		}
	}
	if len(changed) != 1 {
		t.Errorf("one name more changed parts %v, want one", changed)
	}
}

func TestSplitLargeEndpoint(t *testing.T) {
	const budget = 8 << 10
	large := wire.Endpoint{DNSName: "large.example.com", RecordType: "TXT", RecordTTL: 60}
	for i := range 1000 {
		large.Targets = append(large.Targets, fmt.Sprintf(`"text %d"`, i))
	}
	eps := append(hosts(100), large)
	slices.SortFunc(eps, compareEndpoints)
	parts := Split(eps, budget)
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n != len(eps) {
		t.Errorf("the parts hold %d endpoints, not the %d given", n, len(eps))
	}
	// The large endpoint takes more than the budget whatever the number
	// of parts: the others need no more than they would without it.
	if others := len(Split(hosts(100), budget)); len(parts) > others {
		t.Errorf("an endpoint larger than the budget: %d parts, where the others need %d", len(parts), others)
	}
	for i, p := range parts {
		if s := size(t, p); s > budget && !slices.ContainsFunc(p, func(e wire.Endpoint) bool { return e.DNSName == large.DNSName }) {
			t.Errorf("part %d, without the large endpoint, takes %d bytes, more than %d", i, s, budget)
		}
	}
	if parts := Split([]wire.Endpoint{large}, budget); len(parts) != 1 {
		t.Errorf("one endpoint larger than the budget: %d parts, want 1", len(parts))
	}
}

// regroup returns eps split by Split's hash into n parts.
func regroup(eps []wire.Endpoint, n int) [][]wire.Endpoint {
	parts := make([][]wire.Endpoint, n)
	for _, e := range eps {
		p := hashOf(e.DNSName) & uint32(n-1)
		parts[p] = append(parts[p], e)
	}
	return parts
}

// maxSize returns the size of the largest of parts.
func maxSize(t *testing.T, parts [][]wire.Endpoint) int {
	largest := 0
	for _, p := range parts {
		largest = max(largest, size(t, p))
	}
	return largest
}

// compareEndpoints orders endpoints as FromZone does.
func compareEndpoints(a, b wire.Endpoint) int {
	if c := strings.Compare(a.DNSName, b.DNSName); c != 0 {
		return c
	}
	return strings.Compare(a.RecordType, b.RecordType)
}

// sameEndpoint reports whether a and b are the same endpoint.
func sameEndpoint(a, b wire.Endpoint) bool {
	return a.DNSName == b.DNSName && a.RecordType == b.RecordType && a.RecordTTL == b.RecordTTL && slices.Equal(a.Targets, b.Targets)
}
