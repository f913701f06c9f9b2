package outside

import (
	"reflect"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// TestShowOwnerTunnel shows one owner's records through a view with a
// tunnel and no global address: a name with an internal address is the
// CNAME alone, with the lowest TTL of its internal addresses (or the view's
// TTL); a name with public records only, a hidden name, a name that can't
// be an alias (the apex, a name server), a delegation and a name with a
// CNAME of its own are not the tunnel's CNAMEs, and show no internal
// address.
func TestShowOwnerTunnel(t *testing.T) {
	const tunnel = "abc.cfargotunnel.com."
	tests := []struct {
		name  string
		ttl   int64
		alias bool
		in    []string
		want  []string
	}{
		{"internal", -1, true,
			[]string{"app.example.com. 300 IN A 192.168.0.51", "app.example.com. 60 IN AAAA fd00::51"},
			[]string{"app.example.com. 60 IN CNAME " + tunnel}},
		{"the view's ttl", 900, true,
			[]string{"app.example.com. 300 IN A 192.168.0.51"},
			[]string{"app.example.com. 900 IN CNAME " + tunnel}},
		{"other data goes with the addresses", -1, true,
			[]string{"app.example.com. 300 IN A 192.168.0.51", "app.example.com. 300 IN A 198.51.100.7", `app.example.com. 300 IN TXT "v=spf1 -all"`},
			[]string{"app.example.com. 300 IN CNAME " + tunnel}},
		{"wildcard", -1, true,
			[]string{"*.example.com. 300 IN A 192.168.0.51"},
			[]string{"*.example.com. 300 IN CNAME " + tunnel}},
		{"public only", -1, true,
			[]string{"www.example.com. 300 IN A 198.51.100.7", `www.example.com. 300 IN TXT "hello"`},
			[]string{"www.example.com. 300 IN A 198.51.100.7", `www.example.com. 300 IN TXT "hello"`}},
		{"hidden", -1, true,
			[]string{"db.lan.example.com. 300 IN A 192.168.0.9"},
			nil},
		{"apex", -1, false,
			[]string{"example.com. 300 IN A 192.168.0.51", "example.com. 300 IN MX 10 mail.example.net."},
			[]string{"example.com. 300 IN MX 10 mail.example.net."}},
		{"name server", -1, false,
			[]string{"ns1.example.com. 300 IN A 192.168.0.53", "ns1.example.com. 300 IN A 198.51.100.53"},
			[]string{"ns1.example.com. 300 IN A 198.51.100.53"}},
		{"delegation", -1, true,
			[]string{"sub.example.com. 300 IN NS ns.sub.example.com.", "sub.example.com. 300 IN A 192.168.0.53"},
			[]string{"sub.example.com. 300 IN NS ns.sub.example.com."}},
		{"a CNAME of its own", -1, true,
			[]string{"old.example.com. 300 IN CNAME www.example.com.", "old.example.com. 300 IN A 192.168.0.51"},
			[]string{"old.example.com. 300 IN CNAME www.example.com."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Options{TTL: tc.ttl, Tunnel: tunnel, Hide: []string{"lan.example.com."}})
			var in []dns.RR
			for _, s := range tc.in {
				in = append(in, parseRR(t, s))
			}
			got := p.ShowOwner(in, p.Globals(nil), horizon.Place{Alias: tc.alias})
			var texts []string
			for _, rr := range got {
				texts = append(texts, rr.String())
			}
			var want []string
			for _, s := range tc.want {
				want = append(want, parseRR(t, s).String())
			}
			if strings.Join(texts, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestShowOwnerWithoutTunnel holds ShowOwner to Show without a tunnel, at
// a name that can't be an alias too.
func TestShowOwnerWithoutTunnel(t *testing.T) {
	p, g := v4only()
	in := []dns.RR{test.A("example.com. 30 IN A 192.168.0.51")}
	for _, alias := range []bool{false, true} {
		if got := p.ShowOwner(in, g, horizon.Place{Alias: alias}); len(got) != 1 || got[0].(*dns.A).A.String() != "203.0.113.10" {
			t.Errorf("alias %v: got %v", alias, got)
		}
	}
}

// TestRulesNameTheTunnel checks that a tunnel, and whether it takes the
// marked names alone, are in the view's rules, so that a zone's stamp, and
// its serial, move when they change.
func TestRulesNameTheTunnel(t *testing.T) {
	p := New(Options{TTL: -1, Tunnel: "relay.example.net."})
	if r := p.Rules(p.Globals(nil)); !strings.Contains(r, "tunnel relay.example.net.\n") {
		t.Errorf("rules:\n%s", r)
	}
	p = New(Options{TTL: -1, Tunnel: "relay.example.net.", TunnelMarked: true})
	if r := p.Rules(p.Globals(nil)); !strings.Contains(r, "tunnel relay.example.net. marked\n") {
		t.Errorf("rules with marked:\n%s", r)
	}
}

// parseRR parses s, a record in zone-file form.
func parseRR(t *testing.T, s string) dns.RR {
	t.Helper()
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestShowOwnerRoutes shows an internal name through views with a tunnel
// for every name, a tunnel for the marked names, and no tunnel, at each
// route: the CNAME, the global address, or nothing (a route naming no
// target the view has); CountOwner counts each as shown.
func TestShowOwnerRoutes(t *testing.T) {
	const (
		cname   = "app.example.com.\t900\tIN\tCNAME\trelay.example.net."
		address = "app.example.com.\t900\tIN\tA\t203.0.113.10"
	)
	views := map[string]Options{
		"all":    {TTL: 900, Tunnel: "relay.example.net."},
		"marked": {TTL: 900, Tunnel: "relay.example.net.", TunnelMarked: true},
		"none":   {TTL: 900},
	}
	tests := []struct {
		view  string
		route horizon.Route
		want  string
		count Tally
	}{
		{"all", horizon.ViewRoute, cname, Tally{Tunnelled: 1}},
		{"all", horizon.TunnelRoute, cname, Tally{Tunnelled: 1}},
		{"all", horizon.AddressRoute, address, Tally{RewrittenA: 1}},
		{"all", horizon.NoRoute, "", Tally{Unrouted: 1}},
		{"marked", horizon.ViewRoute, address, Tally{RewrittenA: 1}},
		{"marked", horizon.TunnelRoute, cname, Tally{Tunnelled: 1}},
		{"marked", horizon.AddressRoute, address, Tally{RewrittenA: 1}},
		{"marked", horizon.NoRoute, "", Tally{Unrouted: 1}},
		{"none", horizon.ViewRoute, address, Tally{RewrittenA: 1}},
		{"none", horizon.TunnelRoute, "", Tally{Unrouted: 1}},
		{"none", horizon.AddressRoute, address, Tally{RewrittenA: 1}},
	}
	in := []dns.RR{test.A("app.example.com. 300 IN A 192.168.0.51")}
	for _, tc := range tests {
		p, g := at(views[tc.view], "203.0.113.10")
		place := horizon.Place{Alias: true, Route: tc.route}
		var texts []string
		for _, rr := range p.ShowOwner(in, g, place) {
			texts = append(texts, rr.String())
		}
		if got := strings.Join(texts, "\n"); got != tc.want {
			t.Errorf("view %s, route %d: got %q, want %q", tc.view, tc.route, got, tc.want)
		}
		var count Tally
		p.CountOwner(in, g, place, &count)
		if !reflect.DeepEqual(count, tc.count) {
			t.Errorf("view %s, route %d: counted %+v, want %+v", tc.view, tc.route, count, tc.count)
		}
	}
}
