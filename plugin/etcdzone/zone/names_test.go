package zone

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/coredns/coredns/plugin/file/tree"

	"github.com/miekg/dns"
)

// TestNamesUpdate changes a zone a name at a time, at random, among names
// at several depths, wildcards and empty non-terminals among them, and
// holds each version's names, which Build updates from the version
// before's, to those it would index anew.
func TestNamesUpdate(t *testing.T) {
	labels := []string{"a", "b", "*", "c"}
	var pool []string
	for _, l1 := range labels {
		pool = append(pool, l1+".example.com.")
		for _, l2 := range labels {
			pool = append(pool, l2+"."+l1+".example.com.")
			pool = append(pool, "x."+l2+"."+l1+".example.com.")
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	z := &Zone{Name: "example.com.", Apex: testApex}
	idx := NewIndex(nil)
	v, _ := Build(z, idx, nil, nil, nil, Serial{}.At(1))
	held := map[string]*Source{}
	for step := range 2000 {
		changed := map[string]bool{}
		for range 1 + rng.IntN(3) {
			name := pool[rng.IntN(len(pool))]
			if src, ok := held[name]; ok {
				idx.Put(src, nil, changed)
				delete(held, name)
				continue
			}
			rr := &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: []byte{192, 0, 2, byte(step)}}
			held[name] = &Source{Key: name, Owner: name, RRs: []dns.RR{rr}}
			idx.Put(nil, held[name], changed)
		}
		v, _ = Build(z, idx, v, changed, nil, v.Serial.At(int64(step+2)))
		want := indexNames(z.Name, v.nodes)
		if !maps.Equal(v.names.byName, want.byName) || !maps.Equal(v.names.wildcards, want.wildcards) && len(v.names.wildcards)+len(want.wildcards) > 0 {
			t.Fatalf("step %d, %v changed: names\n%v\nwildcards %v\nwant\n%v\nwildcards %v", step, changed, v.names.byName, v.names.wildcards, want.byName, want.wildcards)
		}
		if len(v.nodes) != len(held)+1 {
			t.Fatalf("step %d: %d nodes, want %d and the apex", step, len(v.nodes), len(held))
		}
	}
}

// TestCompareNames holds the nodes' order to the file plugin's tree's
// (DNSSEC's canonical order), escapes and case included.
func TestCompareNames(t *testing.T) {
	names := []string{"example.com.", "a.example.com.", "A.b.example.com.", "b.example.com.", "*.example.com.", "z.example.com.",
		`a\.b.example.com.`, `\001.example.com.`, `\065.example.com.`, "-.example.com.", "aa.example.com.", "a.a.example.com.", "com.", "."}
	for _, a := range names {
		var tr tree.Tree
		tr.Insert(&dns.A{Hdr: dns.RR_Header{Name: a, Rrtype: dns.TypeA, Class: dns.ClassINET}})
		for _, b := range names {
			// tree.Less(e, b) compares b with e's name.
			want, got := -sign(tree.Less(tr.Root.Elem, b)), sign(compareNames(dns.CanonicalName(a), dns.CanonicalName(b)))
			if got != want {
				t.Errorf("%s against %s: %d, want %d", a, b, got, want)
			}
		}
	}
	sorted := slices.SortedFunc(slices.Values([]string{"b.example.com.", "a.b.example.com.", "example.com.", "a.example.com.", "*.example.com."}), compareNames)
	if fmt.Sprint(sorted) != "[example.com. *.example.com. a.example.com. b.example.com. a.b.example.com.]" {
		t.Errorf("sorted: %v", sorted)
	}
}

// sign returns -1, 0 or 1: the sign of n.
func sign(n int) int { return min(max(n, -1), 1) }

// TestIndexSources puts three sources at one name and takes them away in
// turn: the records left keep their order, and a source the index does not
// hold changes nothing.
func TestIndexSources(t *testing.T) {
	idx := NewIndex(nil)
	srcs := make([]*Source, 3)
	for i := range srcs {
		srcs[i] = &Source{Key: fmt.Sprint("/key/", i), Owner: "a.example.com.", RRs: []dns.RR{mustRR(t, fmt.Sprintf("a.example.com. 300 IN A 192.0.2.%d", i+1))}}
		idx.Put(nil, srcs[i], nil)
	}
	records := func() string {
		var out []string
		for _, rr := range idx.records("a.example.com.") {
			out = append(out, rr.(*dns.A).A.String())
		}
		return fmt.Sprint(out)
	}
	for _, step := range []struct {
		remove  *Source
		want    string
		len     int
		changes bool
	}{
		{&Source{Key: "/other", Owner: "a.example.com."}, "[192.0.2.1 192.0.2.2 192.0.2.3]", 3, false},
		{srcs[0], "[192.0.2.2 192.0.2.3]", 2, true},
		{srcs[2], "[192.0.2.2]", 1, true},
		{srcs[1], "[]", 0, true},
	} {
		changed := map[string]bool{}
		idx.Put(step.remove, nil, changed)
		if got := records(); got != step.want || idx.Len() != step.len || changed["a.example.com."] != step.changes {
			t.Errorf("removing %s: %s, %d sources, changed %v; want %s, %d", step.remove.Key, got, idx.Len(), changed, step.want, step.len)
		}
	}
}

// TestPlain unescapes a query's name as the index holds names, and a name
// an etcd key holds with a character a query escapes is found.
func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"app.example.com.":      "app.example.com.",
		`a\@b.example.com.`:     "a@b.example.com.",
		`a\032b.example.com.`:   "a b.example.com.",
		`\065pp.example.com.`:   "app.example.com.",
		`a\.b.example.com.`:     `a\.b.example.com.`,
		`a\046b.example.com.`:   `a\046b.example.com.`,
		`a\\b.example.com.`:     `a\\b.example.com.`,
		`\(x\).example.com.`:    "(x).example.com.",
		`trailing.example.com\`: `trailing.example.com\`,
	} {
		if got := plain(in); got != want {
			t.Errorf("plain(%s) = %s, want %s", in, got, want)
		}
	}
	v := build(newTestIndex(t, "a@b.example.com. 300 IN A 192.0.2.1"), nil)
	if m := ask(v, `a\@b.example.com.`, dns.TypeA); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
		t.Errorf("a\\@b.example.com. A:\n%v", m)
	}
}
