package zone

import (
	"net"
	"slices"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// externalView is a view in the way of globaladdr's: an address in
// 10.0.0.0/8 becomes the global addresses, a TXT record is withheld.
func externalView(globals ...string) *horizon.State {
	return &horizon.State{Show: func(rrs []dns.RR) []dns.RR {
		var out []dns.RR
		for _, rr := range rrs {
			switch rr := rr.(type) {
			case *dns.A:
				if !rr.A.IsPrivate() {
					out = append(out, rr)
					continue
				}
				for _, g := range globals {
					out = append(out, &dns.A{Hdr: rr.Hdr, A: net.ParseIP(g)})
				}
			case *dns.TXT:
			default:
				out = append(out, rr)
			}
		}
		return out
	}}
}

// TestViewRules builds a zone as a view shows it: the answers and the
// transfer hold what it shows, a name it shows nothing of does not exist,
// and a CNAME to it leads nowhere.
func TestViewRules(t *testing.T) {
	idx := newTestIndex(t,
		"app.example.com. 300 IN A 10.0.0.1",
		"pub.example.com. 300 IN A 192.0.2.9",
		`app.example.com. 300 IN TXT "heritage=external-dns"`,
		`owner.example.com. 300 IN TXT "heritage=external-dns"`,
	)
	v := build(idx, externalView("203.0.113.10", "203.0.113.11"))
	check(t, v, map[string]string{
		"app.example.com. A":   "NOERROR\n;\napp.example.com.\t300\tIN\tA\t203.0.113.10\napp.example.com.\t300\tIN\tA\t203.0.113.11\n;\n;",
		"app.example.com. TXT": "NOERROR\n;\n;\n" + soaLine + "\n;",
		"owner.example.com. A": "NXDOMAIN\n;\n;\n" + soaLine + "\n;",
		"pub.example.com. A":   "NOERROR\n;\npub.example.com.\t300\tIN\tA\t192.0.2.9\n;\n;",
	})
	for _, rr := range v.Records() {
		if a, ok := rr.(*dns.A); ok && a.A.IsPrivate() {
			t.Errorf("the transfer holds %s", rr)
		}
	}
}

// TestViewChange builds the next versions of a zone: after a change of one
// name, the others' records are those of the version before (shared, not
// copied), and the change says what changed; after a change of the view,
// every name is built again, and the serial moves even when the caller's
// did not.
func TestViewChange(t *testing.T) {
	idx := newTestIndex(t, "app.example.com. 300 IN A 10.0.0.1", "pub.example.com. 300 IN A 192.0.2.9")
	z := &Zone{Name: "example.com.", Apex: testApex}
	st := externalView("203.0.113.10")
	v1, _ := Build(z, idx, nil, nil, st, Serial{}.At(1))

	changed := map[string]bool{}
	add(idx, "/key/new", "new.example.com.", []dns.RR{mustRR(t, "new.example.com. 300 IN A 10.0.0.2")}, changed)
	v2, d := Build(z, idx, v1, changed, st, Serial{}.At(2))
	if len(d.Removed) != 0 || len(d.Added) != 1 || d.Added[0].String() != "new.example.com.\t300\tIN\tA\t203.0.113.10" || d.From.Serial != v1.Serial.Value() || d.To.Serial != v2.Serial.Value() {
		t.Errorf("one name added: %+v", d)
	}
	if v2.Count() != 3 {
		t.Errorf("%d records, want 3", v2.Count())
	}
	shared := 0
	for _, e := range v2.nodes {
		for _, o := range v1.nodes {
			if e == o {
				shared++
			}
		}
	}
	if shared != len(v1.nodes) {
		t.Errorf("%d of the %d names unchanged are shared", shared, len(v1.nodes))
	}

	v3, d := Build(z, idx, v2, nil, externalView("203.0.113.20"), v2.Serial)
	if len(d.Removed) != 2 || len(d.Added) != 2 || !Newer(v3.Serial.Value(), v2.Serial.Value()) {
		t.Errorf("new global address: %d removed, %d added, serial %d after %d", len(d.Removed), len(d.Added), v3.Serial.Value(), v2.Serial.Value())
	}
}

// TestJudged tells the records of a name and type that the view shows
// otherwise, as the index has them, across a change of another name; none
// for a name the zone does not hold.
func TestJudged(t *testing.T) {
	idx := newTestIndex(t, "app.example.com. 300 IN A 10.0.0.1", "app.example.com. 300 IN TXT \"owned\"", "app.example.com. 300 IN AAAA 2001:db8::1")
	z := &Zone{Name: "example.com.", Apex: testApex}
	st := externalView("203.0.113.10")
	v, _ := Build(z, idx, nil, nil, st, Serial{}.At(1))
	changed := map[string]bool{}
	add(idx, "/key/new", "new.example.com.", []dns.RR{mustRR(t, "new.example.com. 300 IN A 10.0.0.2")}, changed)
	v, _ = Build(z, idx, v, changed, st, Serial{}.At(2))
	for _, c := range []struct {
		name  string
		qtype uint16
		want  int
	}{
		{"app.example.com.", dns.TypeA, 1},
		{"app.example.com.", dns.TypeTXT, 1},
		{"app.example.com.", dns.TypeANY, 3},
		{"app.example.com.", dns.TypeMX, 0},
		{"new.example.com.", dns.TypeA, 1},
		{"none.example.com.", dns.TypeA, 0},
	} {
		got, _ := v.Judged(c.name, c.qtype)
		if len(got) != c.want {
			t.Errorf("%s %s: %v, want %d records", c.name, dns.TypeToString[c.qtype], got, c.want)
		}
		for _, rr := range got {
			if c.qtype != dns.TypeANY && rr.Header().Rrtype != c.qtype {
				t.Errorf("%s %s: %v", c.name, dns.TypeToString[c.qtype], rr)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { v.Judged("app.example.com.", dns.TypeA) }); n != 0 {
		t.Errorf("Judged allocates %v times", n)
	}
}

// TestViewMarks builds a zone from keys marked by the webhook intake: a
// name with a record marked withheld is out of the view whatever its other
// records; with only marked names shown (expose marked), a name is in when
// all its records are marked exposed, and the Corefile's records count as
// exposed. The internal view (no state) shows every name.
func TestViewMarks(t *testing.T) {
	idx := NewIndex(map[string][]dns.RR{"glue": {mustRR(t, "ns1.example.com. 300 IN A 192.0.2.53")}})
	put := func(key, text string, m horizon.Mark) {
		rr := mustRR(t, text)
		idx.Put(nil, &Source{Key: key, Owner: rr.Header().Name, RRs: []dns.RR{rr}, Mark: m}, nil)
	}
	put("/1", "grafana.example.com. 300 IN A 192.0.2.1", horizon.Withheld)
	put("/2", "grafana.example.com. 300 IN AAAA 2001:db8::1", horizon.Unmarked)
	put("/3", "www.example.com. 300 IN A 192.0.2.2", horizon.Exposed)
	put("/4", "plain.example.com. 300 IN A 192.0.2.3", horizon.Unmarked)
	put("/5", "mixed.example.com. 300 IN A 192.0.2.4", horizon.Exposed)
	put("/6", "mixed.example.com. 300 IN AAAA 2001:db8::4", horizon.Unmarked)

	onlyMarked := externalView()
	onlyMarked.Exposes = func(_ string, m horizon.Mark) bool { return m == horizon.Exposed }
	for _, c := range []struct {
		name  string
		st    *horizon.State
		shown []string
	}{
		{"no view", nil, []string{"grafana", "www", "plain", "mixed", "ns1"}},
		{"default", externalView(), []string{"www", "plain", "mixed", "ns1"}},
		{"expose marked", onlyMarked, []string{"www", "ns1"}},
	} {
		v := build(idx, c.st)
		for _, host := range []string{"grafana", "www", "plain", "mixed", "ns1"} {
			m := ask(v, host+".example.com.", dns.TypeA)
			if shown := len(m.Answer) > 0; shown != slices.Contains(c.shown, host) {
				t.Errorf("%s: %s shown %v", c.name, host, shown)
			}
		}
	}
}

// tunnelView is a view in the way of globaladdr's with a tunnel: a name
// with an address in 10.0.0.0/8 is a CNAME to relay.example.net. alone,
// where it may be an alias; where it may not, the address is left out.
func tunnelView() *horizon.State {
	private := func(rr dns.RR) bool { a, ok := rr.(*dns.A); return ok && a.A.IsPrivate() }
	noAlias := func(rrs []dns.RR) []dns.RR {
		return slices.DeleteFunc(slices.Clone(rrs), private)
	}
	show := func(rrs []dns.RR, at horizon.Place) []dns.RR {
		if !at.Alias {
			return noAlias(rrs)
		}
		if !slices.ContainsFunc(rrs, private) {
			return rrs
		}
		return []dns.RR{&dns.CNAME{Hdr: dns.RR_Header{Name: rrs[0].Header().Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 60}, Target: "relay.example.net."}}
	}
	return &horizon.State{Tunnel: "relay.example.net.", ShowAt: show, Show: func(rrs []dns.RR) []dns.RR { return show(rrs, horizon.Place{Alias: true}) }}
}

// TestViewNoAlias builds a zone through a view that makes CNAMEs: the apex,
// a name server's name and a name below a delegation (glue) are shown as
// names that can't be aliases, and a CNAME to the view's tunnel is the
// answer, never chased (this zone has no Upstream, which would fail it).
// The Corefile's glue takes no part in its name's route: beside an etcd
// key routed "tunnel", the name server keeps its public address.
func TestViewNoAlias(t *testing.T) {
	idx := newTestIndex(t,
		"example.com. 300 IN A 10.0.0.1",
		"app.example.com. 300 IN A 10.0.0.2",
		"ns1.example.com. 300 IN A 10.0.0.53",
		"ns1.example.com. 300 IN A 192.0.2.53",
		"sub.example.com. 300 IN NS ns.sub.example.com.",
		"ns.sub.example.com. 300 IN A 10.0.0.54",
	)
	z := &Zone{Name: "example.com.", Apex: testApex, Cuts: []string{"sub.example.com."}, Hosts: []string{"ns.sub.example.com.", "ns1.example.com."}}
	idx.Put(nil, &Source{Key: "glue ns1.example.com.", Owner: "ns1.example.com.", RRs: []dns.RR{mustRR(t, "ns1.example.com. 300 IN A 192.0.2.53")}, Mark: horizon.Exposed, Fixed: true}, nil)
	add(idx, "/key/routed", "ns1.example.com.", []dns.RR{mustRR(t, "ns1.example.com. 300 IN A 10.0.0.53")}, nil)
	idx.owners["ns1.example.com."].Route = horizon.TunnelRoute
	for _, s := range idx.more["ns1.example.com."] {
		if !s.Fixed {
			s.Route = horizon.TunnelRoute
		}
	}
	if r := idx.route("ns1.example.com."); r != horizon.TunnelRoute {
		t.Errorf("ns1's route %d, want tunnel: the glue does not vote", r)
	}
	v, _ := Build(z, idx, nil, nil, tunnelView(), Serial{}.At(1))
	check(t, v, map[string]string{
		"app.example.com. A": "NOERROR\n;\napp.example.com.\t60\tIN\tCNAME\trelay.example.net.\n;\n;",
		"ns1.example.com. A": "NOERROR\n;\nns1.example.com.\t300\tIN\tA\t192.0.2.53\n;\n;",
		"example.com. A":     "NOERROR\n;\n;\n" + soaLine + "\n;",
	})
	for _, rr := range v.Records() {
		if rr.Header().Rrtype == dns.TypeCNAME && rr.Header().Name != "app.example.com." {
			t.Errorf("the transfer holds %s: that name can't be an alias", rr)
		}
	}
}
