package etcdzone

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/hosted"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// newTestZone returns an etcdzone serving example.com from an embedded etcd,
// as start sets it up but without a server: its NS set is ns1.example.net,
// lab.example.com is delegated to ns1.lab.example.com (glue 192.0.2.53) and
// ns2.example.net, and it is loaded. records are written before the load.
func newTestZone(t testing.TB, records ...externaldns.Record) (*EtcdZone, *etcdtest.Server) {
	t.Helper()
	s := startTestEtcd(t, records...)
	return startTestZone(t, s), s
}

// startTestEtcd starts an embedded etcd holding records, until t ends.
func startTestEtcd(t testing.TB, records ...externaldns.Record) *etcdtest.Server {
	t.Helper()
	s, err := etcdtest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	put(t, s, records...)
	return s
}

// startTestZone is newTestZone on the etcd s.
func startTestZone(t testing.TB, s *etcdtest.Server) *EtcdZone {
	t.Helper()
	x := newTestPlugin(t, s)
	x.corefile.Delegations = []config.Delegation{{Name: "lab.example.com.", NS: []string{"ns1.lab.example.com.", "ns2.example.net."}}}
	x.corefile.Glue = []config.Glue{{Name: "ns1.lab.example.com.", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.53")}}}
	return runTestZone(t, x)
}

// runTestZone starts following x's zone, the etcd plugin's, and waits until
// it is loaded.
func runTestZone(t testing.TB, x *EtcdZone) *EtcdZone {
	t.Helper()
	zones := setZones(t, x)
	t.Cleanup(x.follow(zones))
	x.waitLoaded(30 * time.Second)
	if !x.Ready() {
		t.Fatal("the zone did not load")
	}
	return x
}

// testApex is the apex of the tests' zones: the NS set ns1.example.net.
var testApex = zone.Apex{NS: []string{"ns1.example.net."}, TTL: 3600, Refresh: 3600, Retry: 600, Expire: 1209600, Minimum: 300}

// newTestPlugin returns an etcdzone of the zones names (default: the etcd
// plugin's, example.com) on the etcd s, with the NS set ns1.example.net.
func newTestPlugin(t testing.TB, s *etcdtest.Server, names ...string) *EtcdZone {
	t.Helper()
	x := &EtcdZone{
		etcd: &etcd.Etcd{Zones: []string{"example.com."}, PathPrefix: "skydns", Client: s.Client(), Upstream: upstream.New()},
		// The journal's bounds are config.Parse's defaults; a block of the
		// root reaches every zone.
		corefile:   config.Config{Apex: testApex, Zones: names, JournalRecords: 10000, JournalBytes: 4 << 20},
		blockZones: []string{"."},
	}
	x.instance = new(byte) // a tree of its own (see treeID)
	if err := x.open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.tree.release)
	return x
}

// testZone returns a zone name that follows nothing.
func testZone(name string) *blockZone {
	return &blockZone{Zone: hosted.New(&hosted.Block{}, &zone.Zone{Name: name}, "", "", nil, series{})}
}

// setZones makes x's zones, as start does, and returns them.
func setZones(t testing.TB, x *EtcdZone) []*blockZone {
	t.Helper()
	zones, err := x.newZones("dns://test/"+t.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	x.setZones(zones)
	return zones
}

func put(t testing.TB, s *etcdtest.Server, records ...externaldns.Record) {
	t.Helper()
	for _, r := range records {
		if err := externaldns.Put(context.Background(), s.Client(), "/skydns", r); err != nil {
			t.Fatal(err)
		}
	}
}

// zoneRecords are the records of the table, as external-dns writes
// them: an address, a CNAME in the zone and one out of it, a wildcard, a deep
// name under an empty non-terminal, a TXT record and an ownership record.
var zoneRecords = []externaldns.Record{
	{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}, Resource: "ingress/default/app"},
	{Name: "www.example.com", Type: "CNAME", Targets: []string{"app.example.com"}},
	{Name: "out.example.com", Type: "CNAME", Targets: []string{"shop.example.net"}},
	{Name: "*.apps.example.com", Type: "A", Targets: []string{"192.168.0.80"}},
	{Name: "a.b.deep.example.com", Type: "A", Targets: []string{"192.168.0.90"}},
	{Name: "info.example.com", Type: "TXT", Targets: []string{"hello"}},
}

const testSOA = "example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. %d 3600 600 1209600 300"

// TestServeDNS asks the questions of the table, and those of a
// delegation: each gets the answer an authoritative server gives.
func TestServeDNS(t *testing.T) {
	x, _ := newTestZone(t, zoneRecords...)
	soa := test.SOA(fmt.Sprintf(testSOA, x.zones[0].Current().Serial.Value()))
	ns := test.NS("example.com. 3600 IN NS ns1.example.net.")
	cname := test.CNAME("www.example.com. 300 IN CNAME app.example.com.")
	appA := test.A("app.example.com. 300 IN A 192.168.0.51")
	referral := []dns.RR{test.NS("lab.example.com. 3600 IN NS ns1.lab.example.com."), test.NS("lab.example.com. 3600 IN NS ns2.example.net.")}
	cases := []test.Case{
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: []dns.RR{soa}},
		{Qname: "example.com.", Qtype: dns.TypeNS, Answer: []dns.RR{ns}},
		{Qname: "example.com.", Qtype: dns.TypeA, Ns: []dns.RR{soa}},
		{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{appA}},
		{Qname: "app.example.com.", Qtype: dns.TypeSOA, Ns: []dns.RR{soa}},
		{Qname: "app.example.com.", Qtype: dns.TypeMX, Ns: []dns.RR{soa}},
		{Qname: "www.example.com.", Qtype: dns.TypeCNAME, Answer: []dns.RR{cname}},
		{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{appA, cname}},
		{Qname: "www.example.com.", Qtype: dns.TypeAAAA, Answer: []dns.RR{cname}, Ns: []dns.RR{soa}},
		{Qname: "deep.example.com.", Qtype: dns.TypeA, Ns: []dns.RR{soa}},
		{Qname: "b.deep.example.com.", Qtype: dns.TypeA, Ns: []dns.RR{soa}},
		{Qname: "covered.apps.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("covered.apps.example.com. 300 IN A 192.168.0.80")}},
		{Qname: "covered.apps.example.com.", Qtype: dns.TypeTXT, Ns: []dns.RR{soa}},
		{Qname: "nothing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{soa}},
		{Qname: "app.example.com.", Qtype: dns.TypeTXT, Ns: []dns.RR{soa}},
		{Qname: "a-app.example.com.", Qtype: dns.TypeTXT, Answer: []dns.RR{test.TXT(`a-app.example.com. 300 IN TXT "\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app\""`)}},
		{Qname: "host.lab.example.com.", Qtype: dns.TypeA, Ns: referral, Extra: []dns.RR{test.A("ns1.lab.example.com. 3600 IN A 192.0.2.53")}},
	}
	for _, tc := range cases {
		m := exchange(t, x, tc.Qname, tc.Qtype)
		if err := test.CNAMEOrder(m); err != nil {
			t.Errorf("%s %s: %v", tc.Qname, dns.TypeToString[tc.Qtype], err)
		}
		if err := test.SortAndCheck(m, tc); err != nil {
			t.Errorf("%s %s: %v\n%v", tc.Qname, dns.TypeToString[tc.Qtype], err, m)
		}
		if referral := tc.Qname == "host.lab.example.com."; m.Authoritative == referral {
			t.Errorf("%s %s: AA %v", tc.Qname, dns.TypeToString[tc.Qtype], m.Authoritative)
		}
	}
}

// exchange asks x for name's records of qtype, and returns the reply as a
// client reads it (packed and unpacked).
func exchange(t testing.TB, x *EtcdZone, name string, qtype uint16) *dns.Msg {
	t.Helper()
	r := new(dns.Msg)
	r.SetQuestion(name, qtype)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := x.ServeDNS(context.Background(), rec, r); err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	wire, err := rec.Msg.Pack()
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	m := new(dns.Msg)
	if err := m.Unpack(wire); err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return m
}

// TestChanges puts, replaces and deletes keys and checks that the answers
// follow, that two keys with the same record make one, and that each change
// moves the serial to the revision of the write.
func TestChanges(t *testing.T) {
	x, s := newTestZone(t, zoneRecords...)
	z := x.zones[0]
	cli := s.Client()
	answers := func(what, name string, want ...string) {
		t.Helper()
		poll.Until(t, 10*time.Second, what, func() error {
			m := exchange(t, x, name, dns.TypeA)
			var got []string
			for _, rr := range m.Answer {
				if a, ok := rr.(*dns.A); ok {
					got = append(got, a.A.String())
				}
			}
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("%s: %v, want %v", name, got, want)
			}
			return nil
		})
	}
	serialAt := func(what string, rev int64) {
		t.Helper()
		if got, want := z.Current().SOA().Serial, (zone.Serial{}).At(rev).Value(); got != want {
			t.Errorf("%s: serial %d, want %d (revision %d)", what, got, want, rev)
		}
	}

	// write puts value at key ("" deletes it) and returns the revision.
	write := func(key, value string) int64 {
		t.Helper()
		var header *etcdserverpb.ResponseHeader
		if value == "" {
			resp, err := cli.Delete(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			header = resp.Header
		} else {
			resp, err := cli.Put(context.Background(), key, value)
			if err != nil {
				t.Fatal(err)
			}
			header = resp.Header
		}
		return header.Revision
	}
	const x0, x1 = `{"host":"192.168.0.60","targetstrip":1}`, `{"host":"192.168.0.61","targetstrip":1}`

	rev := write("/skydns/com/example/new/1", `{"host":"192.168.0.60"}`)
	answers("put", "1.new.example.com.", "192.168.0.60")
	serialAt("put", rev)
	write("/skydns/com/example/new/x/2", x0)
	rev = write("/skydns/com/example/new/x/3", x1)
	answers("two keys", "x.new.example.com.", "192.168.0.60", "192.168.0.61")
	serialAt("two keys", rev)
	write("/skydns/com/example/new/x/4", x0)
	answers("the same address again", "x.new.example.com.", "192.168.0.60", "192.168.0.61")
	write("/skydns/com/example/new/x/2", "")
	answers("one of the same deleted", "x.new.example.com.", "192.168.0.60", "192.168.0.61")
	rev = write("/skydns/com/example/new/x/4", "")
	answers("both deleted", "x.new.example.com.", "192.168.0.61")
	serialAt("delete", rev)
	write("/skydns/com/example/new/x/3", `{"host":"192.168.0.62","targetstrip":1}`)
	answers("replaced", "x.new.example.com.", "192.168.0.62")

	// A sibling zone's key (example.com-shop) changes nothing, not even the serial.
	write("/skydns/com/example-shop/x", `{"host":"192.168.0.63"}`)
	rev = write("/skydns/com/example/last", `{"host":"192.168.0.64"}`)
	answers("after a sibling's key", "last.example.com.", "192.168.0.64")
	serialAt("after a sibling's key", rev)
}

// TestLoadAfterWritesElsewhere loads a zone whose last change is older than
// etcd's revision (a key outside the zone was written since), while another
// watch shares the etcd client, as globaladdr's from etcd does: the zone
// waits until its watch has seen etcd's revision, and gets the serial of its
// own last change.
func TestLoadAfterWritesElsewhere(t *testing.T) {
	s := startTestEtcd(t, zoneRecords...)
	last, err := s.Client().Get(context.Background(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client().Put(context.Background(), "/globaladdr/example.com", "203.0.113.10"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	defer cancel()
	s.Client().Watch(ctx, "/globaladdr/example.com", clientv3.WithRev(last.Header.Revision+2))
	x := startTestZone(t, s)
	if got, want := exchange(t, x, "example.com.", dns.TypeSOA).Answer[0].(*dns.SOA).Serial, (zone.Serial{}).At(last.Header.Revision).Value(); got != want {
		t.Errorf("serial %d, want %d, that of the zone's last change", got, want)
	}
}

// TestSkippedKeys writes values the zone can't serve: each is left out and
// counted, none of its records served (an MX value without host is no TXT
// record), and the rest of the zone serves on. A key that held a record
// and then holds garbage loses its record.
func TestSkippedKeys(t *testing.T) {
	x, s := newTestZone(t, zoneRecords...)
	for key, value := range map[string]string{
		"/skydns/com/example/garbage":  `{"host":`,
		"/skydns/com/example/empty":    `{}`,
		"/skydns/com/example/badhost":  `{"host":"not a name!"}`,
		"/skydns/com/example/self":     `{"host":"self.example.com"}`,
		"/skydns/com/example/stripped": `{"host":"192.168.0.1","targetstrip":9}`,
		"/skydns/com/example/app/x":    `{"host":"192.168.0.52","targetstrip":1}`,
		"/skydns/com/example/mailless": `{"mail":true,"text":"t"}`,
		"/skydns/com/example/badmx":    `{"host":"not a name!","mail":true}`,
		"/skydns/com/example/bigport":  `{"host":"192.168.0.1","port":70000}`,
	} {
		if _, err := s.Client().Put(context.Background(), key, value); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Client().Put(context.Background(), "/skydns/com/example/app/x", `]]`); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "skipped keys", func() error {
		m := exchange(t, x, "app.example.com.", dns.TypeA)
		if len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != "192.168.0.51" {
			return fmt.Errorf("app.example.com: %v", m.Answer)
		}
		for _, name := range []string{"garbage", "empty", "badhost", "self", "stripped", "mailless", "badmx", "bigport"} {
			if m := exchange(t, x, name+".example.com.", dns.TypeA); m.Rcode != dns.RcodeNameError {
				return fmt.Errorf("%s: %s", name, dns.RcodeToString[m.Rcode])
			}
		}
		return nil
	})
}

// TestOwnershipBesideHost reads the legacy ownership format, a text beside
// the host. Beside an address, the zone holds both records. Beside a CNAME,
// it holds the CNAME alone, which a name with a CNAME must (the text is out
// of reach of queries anyway), and a CNAME query gets the CNAME (the etcd
// plugin answers it NXDOMAIN, external-dns#4953).
func TestOwnershipBesideHost(t *testing.T) {
	x, _ := newTestZone(t,
		externaldns.Record{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}, Resource: "ingress/default/app", Format: externaldns.Legacy},
		externaldns.Record{Name: "www.example.com", Type: "CNAME", Targets: []string{"app.example.com"}, Resource: "ingress/default/www", Format: externaldns.Legacy})
	m := exchange(t, x, "www.example.com.", dns.TypeCNAME)
	if len(m.Answer) != 1 || m.Answer[0].Header().Rrtype != dns.TypeCNAME {
		t.Errorf("CNAME query: %v", m)
	}
	types := map[string][]uint16{}
	for _, rr := range x.zones[0].Current().Records() {
		types[rr.Header().Name] = append(types[rr.Header().Name], rr.Header().Rrtype)
	}
	for name, want := range map[string][]uint16{"app.example.com.": {dns.TypeA, dns.TypeTXT}, "www.example.com.": {dns.TypeCNAME}} {
		if got := slices.Sorted(slices.Values(types[name])); !slices.Equal(got, want) {
			t.Errorf("%s holds types %v, want %v", name, got, want)
		}
	}
}

// TestTransferIXFR checks the up-to-date IXFR and the full transfer.
func TestTransferIXFR(t *testing.T) {
	x, _ := newTestZone(t, zoneRecords...)
	current := x.zones[0].Current().SOA().Serial
	for _, tc := range []struct {
		serial uint32
		whole  bool
	}{{0, true}, {current, false}, {current + 1, false}, {current - 1, true}, {current + 1<<31 + 1, true}} {
		ch, err := x.Transfer("example.com.", tc.serial)
		if err != nil {
			t.Fatal(err)
		}
		var rrs []dns.RR
		for batch := range ch {
			rrs = append(rrs, batch...)
		}
		if whole := len(rrs) > 1; whole != tc.whole {
			t.Errorf("IXFR from %d: %d records", tc.serial, len(rrs))
		}
		if tc.whole && (rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA || rrs[1].Header().Rrtype != dns.TypeNS) {
			t.Errorf("a transfer begins with the SOA and the NS set and ends with the SOA:\n%v", rrs)
		}
	}
	if _, err := x.Transfer("example.org.", 0); err == nil {
		t.Error("a transfer of another zone must fail")
	}
	if _, err := x.Transfer("sub.example.com.", 0); err == nil {
		t.Error("a transfer of a name below the zone must fail")
	}
}

// TestTransferPages transfers a zone of more keys than a page of the load
// holds: every record comes once, at its own name.
func TestTransferPages(t *testing.T) {
	var records []externaldns.Record
	const hosts = 2*etcdtree.PageSize + 10
	for i := range hosts {
		records = append(records, externaldns.Record{Name: fmt.Sprintf("h%d.example.com", i), Type: "A", Targets: []string{"192.168.0.51"}})
	}
	x, _ := newTestZone(t, records...)
	ch, err := x.Transfer("example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	n := 0
	for batch := range ch {
		for _, rr := range batch {
			n++
			seen[rr.Header().Name+dns.TypeToString[rr.Header().Rrtype]] = true
		}
	}
	// The hosts, the SOA twice, the NS, the delegation's two NS and its glue.
	if want := hosts + 6; n != want || !seen["h0.example.com.A"] || !seen[fmt.Sprintf("h%d.example.com.A", hosts-1)] {
		t.Errorf("%d records, want %d with every host", n, want)
	}
}

// TestForeignUpdate sends an UPDATE for a zone the plugin does not serve: it
// is refused, and the plugins below never see it (a forward plugin would
// relay it).
func TestForeignUpdate(t *testing.T) {
	next := plugin.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
		t.Error("the UPDATE went down the chain")
		return dns.RcodeSuccess, nil
	})
	x := &EtcdZone{Next: next}
	r := new(dns.Msg)
	r.SetUpdate("example.org.")
	if rcode, _ := x.ServeDNS(context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), r); rcode != dns.RcodeRefused {
		t.Errorf("rcode %s, want REFUSED", dns.RcodeToString[rcode])
	}
}

// TestInnerZone serves example.com and lan.example.com: each key is in one
// zone, the deepest, so the outer zone's transfer holds none of the inner
// one's records, and each zone answers its own names.
func TestInnerZone(t *testing.T) {
	s, err := etcdtest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	put(t, s,
		externaldns.Record{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}},
		externaldns.Record{Name: "app.lan.example.com", Type: "A", Targets: []string{"192.168.0.52"}})
	x := newTestPlugin(t, s, "example.com.", "lan.example.com.")
	zones := setZones(t, x)
	t.Cleanup(x.follow(zones))
	poll.Until(t, 10*time.Second, "the zones loaded", func() error {
		if !x.Ready() {
			return errors.New("not loaded")
		}
		return nil
	})
	ch, err := x.Transfer("example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	for batch := range ch {
		for _, rr := range batch {
			if dns.IsSubDomain("lan.example.com.", rr.Header().Name) {
				t.Errorf("example.com's transfer holds %s", rr)
			}
		}
	}
	for name, want := range map[string]string{"app.example.com.": "192.168.0.51", "app.lan.example.com.": "192.168.0.52"} {
		m := exchange(t, x, name, dns.TypeA)
		if len(m.Answer) != 1 || m.Answer[0].(*dns.A).A.String() != want {
			t.Errorf("%s: %v, want %s", name, m.Answer, want)
		}
	}
}

// TestZoneMap finds the deepest zone of a name, by the names above it.
func TestZoneMap(t *testing.T) {
	s := dnsname.Set([]string{"Example.com.", "in.lab.example.net."})
	for name, want := range map[string]bool{
		"example.com.": true, "a.b.EXAMPLE.com": true, "com.": false, "xexample.com.": false,
		"in.lab.example.net.": true, "x.in.lab.example.net.": true, "lab.example.net.": false, ".": false,
	} {
		if got := s.Holds(name); got != want {
			t.Errorf("Holds(%q) = %v, want %v", name, got, want)
		}
	}
	if !dnsname.Set([]string{"."}).Holds("example.com.") || !dnsname.Set([]string{"."}).Holds(".") {
		t.Error("the root holds no name")
	}
	zones := []*blockZone{testZone("example.com."), testZone("lan.example.com.")}
	m := byName(zones)
	for name, want := range map[string]*blockZone{
		"example.com.": zones[0], "a.example.com.": zones[0], "lan.example.com.": zones[1], "A.Lan.Example.Com.": zones[1], "example.org.": nil,
	} {
		if _, got, _ := m.Deepest(name); got != want {
			t.Errorf("Deepest(%q) = %v, want %v", name, got, want)
		}
	}
}
