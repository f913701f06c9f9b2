package hosted

import (
	"bytes"
	golog "log"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/fixedview"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// TestRejudgeMovesSerial changes the view's global addresses, written at a
// revision before the zone's last change: the serial moves all the same, so
// that the secondaries transfer the zone with the new addresses; a new
// state of the view that shows the zone alike leaves it. (The first state
// publishes the zone at the serial of its last change.)
func TestRejudgeMovesSerial(t *testing.T) {
	b := &Block{}
	z := New(b, &zone.Zone{Name: "example.com.", Apex: &testApex}, "/skydns/com/example", "dns://test/"+t.Name(), zone.NewJournal(0, 0), nopMeter{})
	z.serial = zone.Serial{}.At(100)
	app := &dns.A{Hdr: dns.RR_Header{Name: "app.example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.ParseIP("192.168.0.51")}
	z.idx = zone.NewIndex(map[string][]dns.RR{"app": {app}})
	for _, tc := range []struct {
		rev    int64
		global string
		moves  bool
	}{{50, "203.0.113.1", false}, {50, "203.0.113.2", true}, {50, "203.0.113.2", false}, {150, "203.0.113.3", true}} {
		b.View = fixedview.View{State: &horizon.State{Revision: tc.rev, Rules: "global " + tc.global, Show: func(rrs []dns.RR) []dns.RR {
			global := dns.Copy(rrs[0]).(*dns.A)
			global.A = net.ParseIP(tc.global)
			return []dns.RR{global}
		}}}
		before := z.serial
		z.rejudge()
		if moved := zone.Newer(z.serial.Value(), before.Value()); moved != tc.moves {
			t.Errorf("addresses %s of revision %d: serial %d after %d, want moved %v", tc.global, tc.rev, z.serial.Value(), before.Value(), tc.moves)
		}
	}
	if want := (zone.Serial{}.At(150)).Value(); z.serial.Value() != want {
		t.Errorf("serial %d, want %d, that of the addresses' revision", z.serial.Value(), want)
	}
}

// TestWarnLoaded loads example.com, whose name server ns1.example.com lies
// inside it, in the ways an operator gets it wrong and right: a zone
// without a key of etcd, a name server without an address, glue the view
// shows nothing of each get a warning that says what to check or add; a
// zone with a key and the name server's address, from glue or from etcd,
// gets none.
func TestWarnLoaded(t *testing.T) {
	host := &zone.Source{Key: "/skydns/com/example/app/1", Owner: "app.example.com.", RRs: []dns.RR{test.A("app.example.com. 300 IN A 192.0.2.1")}}
	nsHost := &zone.Source{Key: "/skydns/com/example/ns1/1", Owner: "ns1.example.com.", RRs: []dns.RR{test.A("ns1.example.com. 300 IN A 192.0.2.10")}}
	private := []netip.Addr{netip.MustParseAddr("192.168.0.10")}
	public := []netip.Addr{netip.MustParseAddr("192.0.2.10")}
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
		empty   = "zone example.com. has no record from etcd: etcd (<nil>) holds no key at or below /skydns/com/example; check that the etcd plugin's zone and path are where external-dns writes"
		noAddr  = "zone example.com. holds no address of its name server ns1.example.com., which lies inside it: NS answers and referrals carry none, and resolvers may not reach it; add its addresses to etcdzone (glue ns1.example.com. ADDRESS...) or write its A or AAAA record to etcd"
		dropped = "zone example.com. shows no address of its name server ns1.example.com.: the view leaves out every address of its glue"
	)
	for _, tc := range []struct {
		name    string
		sources []*zone.Source
		glue    []netip.Addr
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
			apex := zone.Apex{NS: []string{"ns1.example.com.", "ns2.example.net."}, TTL: 3600}
			b := &Block{Etcd: noEtcd{}, Names: dnsname.Set([]string{"example.com."}), NameServers: map[string]bool{"ns1.example.com.": tc.glue != nil, "ns2.example.net.": false}}
			z := New(b, &zone.Zone{Name: "example.com.", Apex: &apex}, "/skydns/com/example", "", nil, nopMeter{})
			if tc.glue != nil {
				z.Fix("glue ns1.example.com.", apex.AddressRecords("ns1.example.com.", tc.glue)...)
			}
			z.idx = zone.NewIndex(z.fixed)
			for _, s := range tc.sources {
				z.idx.Put(nil, s, nil)
			}
			v, _ := zone.Build(z.config, z.idx, nil, nil, tc.st, zone.Serial{}.At(1))

			var out bytes.Buffer
			golog.SetOutput(&out)
			z.warnLoaded(v)
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

// noEtcd names no etcd in the log, as a block before it connects.
type noEtcd struct{}

func (noEtcd) String() string { return "<nil>" }

func TestRecordsInWords(t *testing.T) {
	if got := recordCount(1) + ", " + recordCount(0) + ", " + recordCount(2); got != "1 record, 0 records, 2 records" {
		t.Errorf("records: %q", got)
	}
}
