package etcdzone

import (
	"bytes"
	golog "log"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// TestWarnLoaded loads example.com, whose name server ns1.example.com lies
// inside it, in the ways an operator gets it wrong and right: a zone
// without a key of etcd, a name server without an address, glue the view
// shows nothing of each get a warning that says what to check or add; a
// zone with a key and the name server's address, from glue or from etcd,
// gets none.
func TestWarnLoaded(t *testing.T) {
	host := &zone.Source{Key: "/skydns/com/example/app/1", Owner: "app.example.com.", RRs: []dns.RR{test.A("app.example.com. 300 IN A 192.0.2.1")}}
	nsHost := &zone.Source{Key: "/skydns/com/example/ns1/1", Owner: "ns1.example.com.", RRs: []dns.RR{test.A("ns1.example.com. 300 IN A 192.0.2.10")}}
	private := []config.Glue{{Name: "ns1.example.com.", Addrs: []netip.Addr{netip.MustParseAddr("192.168.0.10")}}}
	public := []config.Glue{{Name: "ns1.example.com.", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10")}}}
	dropsPrivate := &horizon.State{Show: func(rrs []dns.RR) []dns.RR {
		var out []dns.RR
		for _, rr := range rrs {
			if a, ok := rr.(*dns.A); !ok || !a.A.IsPrivate() {
				out = append(out, rr)
			}
		}
		return out
	}}
	const (
		empty   = "zone example.com. loaded with no records: etcd (<nil>) holds no key at or below /skydns/com/example; check that the etcd plugin's zone and path are where external-dns writes"
		noAddr  = "zone example.com. holds no address of its name server ns1.example.com., which lies inside it: NS answers and referrals carry none, and resolvers may not reach it; add its addresses to etcdzone (glue ns1.example.com. ADDRESS...) or write its A or AAAA record to etcd"
		dropped = "zone example.com. shows no address of its name server ns1.example.com.: the view leaves out every address of its glue"
	)
	for _, tc := range []struct {
		name    string
		sources []*zone.Source
		glue    []config.Glue
		st      *horizon.State
		want    []string
	}{
		{"empty, no glue", nil, nil, nil, []string{empty, noAddr}},
		{"empty, glue", nil, public, nil, []string{empty}},
		{"a host, no glue", []*zone.Source{host}, nil, nil, []string{noAddr}},
		{"a host, glue", []*zone.Source{host}, public, nil, nil},
		{"the name server's address in etcd", []*zone.Source{host, nsHost}, nil, nil, nil},
		{"glue the view leaves out", []*zone.Source{host}, private, dropsPrivate, []string{dropped}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &EtcdZone{corefile: config.Config{Apex: zone.Apex{NS: []string{"ns1.example.com.", "ns2.example.net."}, TTL: 3600}, Glue: tc.glue}}
			z := &hosted{name: "example.com.", apexKey: "/skydns/com/example", fixed: map[string][]dns.RR{}}
			z.config = &zone.Zone{Name: z.name, Apex: &x.corefile.Apex}
			x.setZones([]*hosted{z})
			if err := x.placeFixed(x.zones); err != nil {
				t.Fatal(err)
			}
			z.idx = zone.NewIndex(z.fixed)
			for _, s := range tc.sources {
				z.idx.Put(nil, s, nil)
			}
			v, _ := zone.Build(z.config, z.idx, nil, nil, tc.st, zone.Serial{}.At(1))

			var out bytes.Buffer
			golog.SetOutput(&out)
			x.warnLoaded(z, v)
			golog.SetOutput(os.Stderr)

			logged := out.String()
			for _, want := range tc.want {
				if !strings.Contains(logged, "[WARNING] plugin/etcdzone: "+want) {
					t.Errorf("the log lacks %q:\n%s", want, logged)
				}
			}
			if n := strings.Count(logged, "\n"); n != len(tc.want) {
				t.Errorf("%d lines logged, want %d:\n%s", n, len(tc.want), logged)
			}
		})
	}
}
