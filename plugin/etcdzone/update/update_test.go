package update

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// zoneOfExample is the zone lookup of a plugin serving example.com.
func zoneOfExample(name string) string {
	if dns.IsSubDomain("example.com.", name) {
		return "example.com."
	}
	return ""
}

// newUpdate returns an UPDATE of zone with prerequisites prereq and changes
// upd, each a record in zone-file form.
func newUpdate(zone string, prereq, upd []string) *dns.Msg {
	m := new(dns.Msg)
	m.SetUpdate(zone)
	for _, s := range prereq {
		m.Answer = append(m.Answer, mustRR(s))
	}
	for _, s := range upd {
		m.Ns = append(m.Ns, mustRR(s))
	}
	return m
}

// mustRR parses s, a record in zone-file form, or NAME TTL CLASS TYPE for a
// record without data, as RFC 2136 uses them.
func mustRR(s string) dns.RR {
	if f := strings.Fields(s); len(f) == 4 {
		ttl, _ := strconv.Atoi(f[1])
		return &dns.ANY{Hdr: dns.RR_Header{Name: f[0], Ttl: uint32(ttl), Class: dns.StringToClass[f[2]], Rrtype: dns.StringToType[f[3]]}}
	}
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(err)
	}
	return rr
}

// wire packs and unpacks m, as it reaches the server: records without data
// get their RDLENGTH of 0.
func wire(t testing.TB, m *dns.Msg) *dns.Msg {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	out := new(dns.Msg)
	if err := out.Unpack(b); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseUpdate(t *testing.T) {
	const challenge = `_acme-challenge.app.example.com. 60 IN TXT "token"`
	for _, tc := range []struct {
		name           string
		msg            *dns.Msg
		rcode          int
		prereqs, chngs int
	}{
		{"add", newUpdate("example.com.", nil, []string{challenge}), dns.RcodeSuccess, 0, 1},
		{"delete value", newUpdate("example.com.", nil, []string{`_acme-challenge.app.example.com. 0 NONE TXT "token"`}), dns.RcodeSuccess, 0, 1},
		{"delete RRset and add", newUpdate("example.com.", nil, []string{"_acme-challenge.app.example.com. 0 ANY TXT", challenge}), dns.RcodeSuccess, 0, 2},
		{"prerequisites", newUpdate("example.com.", []string{"app.example.com. 0 ANY ANY", "x.example.com. 0 NONE ANY", "app.example.com. 0 ANY A", "y.example.com. 0 NONE TXT", `app.example.com. 0 IN TXT "a"`, `app.example.com. 0 IN TXT "b"`}, nil), dns.RcodeSuccess, 5, 0},
		{"another zone", newUpdate("example.org.", nil, []string{`x.example.org. 60 IN TXT "t"`}), dns.RcodeNotAuth, 0, 0},
		{"below the zone", newUpdate("app.example.com.", nil, []string{challenge}), dns.RcodeNotAuth, 0, 0},
		{"a name out of the zone", newUpdate("example.com.", nil, []string{`x.example.org. 60 IN TXT "t"`}), dns.RcodeNotZone, 0, 0},
		{"a prerequisite with a TTL", newUpdate("example.com.", []string{"app.example.com. 60 ANY A"}, nil), dns.RcodeFormatError, 0, 0},
		{"a deletion with a TTL", newUpdate("example.com.", nil, []string{"app.example.com. 60 ANY A"}), dns.RcodeFormatError, 0, 0},
		{"a meta type", newUpdate("example.com.", nil, []string{"app.example.com. 60 IN ANY"}), dns.RcodeFormatError, 0, 0},
		{"class CH", newUpdate("example.com.", nil, []string{`app.example.com. 60 CH TXT "t"`}), dns.RcodeFormatError, 0, 0},
	} {
		u, rcode := Parse(wire(t, tc.msg), zoneOfExample)
		if rcode != tc.rcode {
			t.Errorf("%s: %s, want %s", tc.name, dns.RcodeToString[rcode], dns.RcodeToString[tc.rcode])
			continue
		}
		if rcode == dns.RcodeSuccess && (len(u.prereqs) != tc.prereqs || len(u.changes) != tc.chngs) {
			t.Errorf("%s: %d prerequisites and %d changes, want %d and %d", tc.name, len(u.prereqs), len(u.changes), tc.prereqs, tc.chngs)
		}
	}
	m := newUpdate("example.com.", nil, nil)
	m.Question = nil
	if _, rcode := Parse(m, zoneOfExample); rcode != dns.RcodeFormatError {
		t.Errorf("no zone section: %s", dns.RcodeToString[rcode])
	}
	big := newUpdate("example.com.", nil, nil)
	for range maxUpdateRecords + 1 {
		big.Ns = append(big.Ns, mustRR(challenge))
	}
	if _, rcode := Parse(big, zoneOfExample); rcode != dns.RcodeRefused {
		t.Errorf("an oversized UPDATE: %s", dns.RcodeToString[rcode])
	}
}

func TestRulePermits(t *testing.T) {
	acme := ChallengeRule("k.", "")
	wide := Rule{Key: "k.", Name: "*.lab.example.com.", Types: []uint16{dns.TypeA}}
	all := Rule{Key: "k.", Name: "*", Types: Updatable}
	for _, tc := range []struct {
		r    Rule
		key  string
		name string
		t    uint16
		want bool
	}{
		{acme, "k.", "_acme-challenge.app.example.com.", dns.TypeTXT, true},
		{acme, "k.", "_acme-challenge.example.com.", dns.TypeTXT, true},
		{acme, "other.", "_acme-challenge.app.example.com.", dns.TypeTXT, false},
		{acme, "k.", "_acme-challenge.app.example.com.", dns.TypeA, false},
		{acme, "k.", "app.example.com.", dns.TypeTXT, false},
		{acme, "k.", "x._acme-challenge.app.example.com.", dns.TypeTXT, false},
		{acme, "k.", "_acme-challenge.app.example.com.", dns.TypeANY, false},
		{wide, "k.", "host.lab.example.com.", dns.TypeA, true},
		{wide, "k.", "lab.example.com.", dns.TypeA, false},
		{wide, "k.", "host.lab.example.com.", dns.TypeTXT, false},
		{all, "k.", "example.com.", dns.TypeANY, true},
		// A type given twice does not make up for one missing; one given
		// beside * takes nothing away.
		{Rule{Key: "k.", Name: "*", Types: []uint16{dns.TypeA, dns.TypeA, dns.TypeA, dns.TypeA}}, "k.", "example.com.", dns.TypeANY, false},
		{Rule{Key: "k.", Name: "*", Types: append(slices.Clone(Updatable), dns.TypeA)}, "k.", "example.com.", dns.TypeANY, true},
		{Rule{Key: "k.", Name: "@", Types: Updatable}, "k.", "example.com.", dns.TypeA, true},
		{Rule{Key: "k.", Name: "@", Types: Updatable}, "k.", "app.example.com.", dns.TypeA, false},
	} {
		if got := tc.r.permits(tc.key, "example.com.", tc.name, tc.t); got != tc.want {
			t.Errorf("%s %v permits %s %s %s: %v", tc.r.Name, tc.r.Types, tc.key, tc.name, dns.TypeToString[tc.t], got)
		}
	}
}

// TestNamesChange applies changes to stored records as RFC 2136 section
// 3.4.2 says, and checks prerequisites against them.
func TestNamesChange(t *testing.T) {
	const name = "_acme-challenge.app.example.com."
	stored := func() *names {
		return &names{entries: []*Entry{
			{Key: "/k/1", Owner: name, RRs: []dns.RR{test.TXT(name + ` 60 IN TXT "one"`)}},
			{Key: "/k/2", Owner: name, RRs: []dns.RR{test.TXT(name + ` 60 IN TXT "two"`)}},
			{Key: "/k/3", Owner: "app.example.com.", RRs: []dns.RR{test.A("app.example.com. 60 IN A 192.168.0.51"), test.TXT(`app.example.com. 60 IN TXT "owner"`)}},
		}}
	}
	texts := func(n *names) []string {
		var out []string
		for _, rr := range n.rrset(name, dns.TypeTXT) {
			out = append(out, rr.(*dns.TXT).Txt[0])
		}
		return out
	}
	parse := func(upd string) change {
		u, rcode := Parse(wire(t, newUpdate("example.com.", nil, []string{upd})), zoneOfExample)
		if rcode != dns.RcodeSuccess {
			t.Fatalf("%s: %s", upd, dns.RcodeToString[rcode])
		}
		return u.changes[0]
	}
	for _, tc := range []struct {
		upd   string
		rcode int
		want  string
	}{
		{name + ` 60 IN TXT "three"`, dns.RcodeSuccess, "[one two three]"},
		{name + ` 300 IN TXT "one"`, dns.RcodeSuccess, "[one two]"}, // a duplicate
		{name + ` 0 NONE TXT "one"`, dns.RcodeSuccess, "[two]"},
		{name + ` 0 ANY TXT`, dns.RcodeSuccess, "[]"},
		{name + ` 0 ANY ANY`, dns.RcodeSuccess, "[]"},
		{`app.example.com. 0 ANY TXT`, dns.RcodeRefused, ""}, // the key holds an address too
	} {
		n := stored()
		rcode := n.change(parse(tc.upd), "/k", true)
		if rcode != tc.rcode {
			t.Errorf("%s: %s", tc.upd, dns.RcodeToString[rcode])
		} else if got := fmtList(texts(n)); rcode == dns.RcodeSuccess && got != tc.want {
			t.Errorf("%s: %s, want %s", tc.upd, got, tc.want)
		}
	}
	n := stored()
	for _, tc := range []struct {
		p     prerequisite
		rcode int
	}{
		{prerequisite{cond: nameInUse, name: name}, dns.RcodeSuccess},
		{prerequisite{cond: nameInUse, name: "x.example.com."}, dns.RcodeNameError},
		{prerequisite{cond: nameNotInUse, name: name}, dns.RcodeYXDomain},
		{prerequisite{cond: rrsetExists, name: name, rrtype: dns.TypeTXT}, dns.RcodeSuccess},
		{prerequisite{cond: rrsetExists, name: name, rrtype: dns.TypeA}, dns.RcodeNXRrset},
		{prerequisite{cond: rrsetAbsent, name: name, rrtype: dns.TypeTXT}, dns.RcodeYXRrset},
		{prerequisite{cond: rrsetEquals, name: name, rrtype: dns.TypeTXT, rrs: []dns.RR{test.TXT(name + ` 0 IN TXT "two"`), test.TXT(name + ` 0 IN TXT "one"`)}}, dns.RcodeSuccess},
		{prerequisite{cond: rrsetEquals, name: name, rrtype: dns.TypeTXT, rrs: []dns.RR{test.TXT(name + ` 0 IN TXT "one"`)}}, dns.RcodeNXRrset},
	} {
		if rcode := n.holds(tc.p); rcode != tc.rcode {
			t.Errorf("%+v: %s, want %s", tc.p, dns.RcodeToString[rcode], dns.RcodeToString[tc.rcode])
		}
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

// FuzzParseUpdate feeds arbitrary messages to the UPDATE parser and applies
// what it accepts to stored records: nothing panics, and every change it
// accepts names a name in the zone.
func FuzzParseUpdate(f *testing.F) {
	for _, m := range []*dns.Msg{
		newUpdate("example.com.", nil, []string{`_acme-challenge.app.example.com. 60 IN TXT "token"`}),
		newUpdate("example.com.", []string{"app.example.com. 0 ANY ANY", `app.example.com. 0 IN TXT "a"`}, []string{"_acme-challenge.app.example.com. 0 ANY TXT", `_acme-challenge.app.example.com. 0 NONE TXT "x"`, "app.example.com. 0 ANY ANY"}),
		newUpdate("example.org.", nil, []string{`x.example.org. 60 IN A 192.0.2.1`}),
	} {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := new(dns.Msg)
		if m.Unpack(b) != nil {
			return
		}
		u, rcode := Parse(m, zoneOfExample)
		if rcode != dns.RcodeSuccess {
			return
		}
		n := &names{}
		for _, c := range u.changes {
			if !dns.IsSubDomain("example.com.", c.name) {
				t.Fatalf("a change of %s, out of the zone", c.name)
			}
			n.change(c, "/k", false)
		}
		for _, p := range u.prereqs {
			n.holds(p)
		}
	})
}
