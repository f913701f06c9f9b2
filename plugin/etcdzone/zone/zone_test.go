package zone

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// testApex is the apex of the tests' zone, example.com.
var testApex = &Apex{NS: []string{"ns1.example.net."}, TTL: 3600, Refresh: 3600, Retry: 600, Expire: 1209600, Minimum: 300}

// newTestIndex returns an index with each of rrs under a key of its own.
func newTestIndex(t *testing.T, rrs ...string) *Index {
	t.Helper()
	idx := NewIndex(nil)
	for i, s := range rrs {
		rr := mustRR(t, s)
		add(idx, fmt.Sprint("/key/", i), rr.Header().Name, []dns.RR{rr}, nil)
	}
	return idx
}

// add adds rrs, at owner, to idx as the records of a new source, key; it
// adds the owner name to changed (when not nil).
func add(idx *Index, key, owner string, rrs []dns.RR, changed map[string]bool) {
	idx.Put(nil, &Source{Key: key, Owner: owner, RRs: rrs}, changed)
}

// build returns the first version of example.com from idx, at st, with the
// subdomains cuts delegated.
func build(idx *Index, st *horizon.State, cuts ...string) *Version {
	z := &Zone{Name: "example.com.", Apex: testApex, Cuts: cuts}
	v, _ := Build(z, idx, nil, nil, st, Serial{}.At(1))
	return v
}

// ask returns v's answer to name's records of qtype.
func ask(v *Version, name string, qtype uint16) *dns.Msg {
	state := request.Request{W: &test.ResponseWriter{}, Req: new(dns.Msg).SetQuestion(name, qtype)}
	return v.Answer(context.Background(), state, func(name string) bool { return dns.IsSubDomain("example.com.", name) })
}

// sections returns m's rcode and sections as text, one record a line.
func sections(m *dns.Msg) string {
	var b strings.Builder
	b.WriteString(dns.RcodeToString[m.Rcode])
	for _, s := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		b.WriteString("\n;")
		lines := make([]string, 0, len(s))
		for _, rr := range s {
			lines = append(lines, rr.String())
		}
		slices.Sort(lines)
		for _, l := range lines {
			b.WriteString("\n" + l)
		}
	}
	return b.String()
}

// check asks v each of cases' questions and compares the answers' sections
// with the cases' (the records of each section sorted).
func check(t *testing.T, v *Version, cases map[string]string) {
	t.Helper()
	for q, want := range cases {
		name, qtype, _ := strings.Cut(q, " ")
		if got := sections(ask(v, name, dns.StringToType[qtype])); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}

// soaLine is the SOA record of the first version, as sections shows it.
const soaLine = "example.com.\t3600\tIN\tSOA\tns1.example.net. hostmaster.example.com. 2000000010 3600 600 1209600 300"
