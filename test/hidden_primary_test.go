package test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/goroutines"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
)

// hiddenPrimaryCorefile is a hidden primary for example.com: the external
// view, its global addresses from an etcd key, transferable with TSIG, with
// SOA timers far beyond any test's length, so that only NOTIFY can bring a
// change to a secondary in time. ETCD stands for etcd's endpoint, TO for the
// transfer plugin's to addresses, KEY and SECRET for the TSIG key.
const hiddenPrimaryCorefile = `example.com:{port:primary} {
	tsig {
		secret KEY SECRET
		require AXFR IXFR
	}
	globaladdr {
		from etcd /globaladdr/example.com
		ttl 900
		hide secret.example.com
	}
	etcdzone {
		ns ns1.example.net ns2.example.net
		refresh 86400
		retry 86400
	}
	transfer {
		to TO
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// globalKey is the etcd key of the hidden primary's global addresses.
const globalKey = "/globaladdr/example.com"

// startHiddenPrimary starts an etcd holding the zone's records and global
// addresses, and a hidden primary notifying to (transfer's to addresses). It
// returns the primary's Corefile too, for a reload or a restart.
func startHiddenPrimary(t *testing.T, to ...string) (*coreDNS, *etcdtest.Server, string) {
	t.Helper()
	return startHiddenPrimaryOf(t, hiddenPrimaryCorefile, to...)
}

// startHiddenPrimaryOf is startHiddenPrimary with corefile, one with
// hiddenPrimaryCorefile's placeholders.
func startHiddenPrimaryOf(t testing.TB, corefile string, to ...string) (*coreDNS, *etcdtest.Server, string) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		a("www.example.com", "198.51.100.80"),
		aaaa("v6.example.com", "fd00::51"),
		cname("alias.example.com", "app.example.com"),
		txt("info.example.com", "hello"),
		a("x.y.example.com", "192.168.0.52"),
		a("secret.example.com", "192.168.0.99"),
		a("db.secret.example.com", "10.0.0.5"),
	)
	putGlobal(t, etcd, "203.0.113.10 2001:db8::10")
	corefile = strings.NewReplacer(
		"ETCD", etcd.Endpoint(),
		"TO", strings.Join(to, " "),
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
	).Replace(corefile)
	return startCoreDNS(t, corefile), etcd, corefile
}

// putGlobal sets the hidden primary's global addresses.
func putGlobal(t testing.TB, etcd *etcdtest.Server, value string) {
	t.Helper()
	if _, err := etcd.Client().Put(context.Background(), globalKey, value); err != nil {
		t.Fatal(err)
	}
}

// hiddenPrimaryPolicy is what no copy of the zone may show.
var hiddenPrimaryPolicy = &viewcheck.Policy{Internal: viewcheck.DefaultInternal, Hide: []string{"secret.example.com."}}

// TestHiddenPrimarySecondaries runs BIND 9, NSD and Knot as secondaries of a hidden
// primary: they transfer the external view with TSIG, serve the global
// addresses, and follow a record added, a record deleted and a change of the
// global addresses through NOTIFY, long before their refresh timers. A
// transfer from each of them holds no internal address, no hidden name and
// no ownership record.
func TestHiddenPrimarySecondaries(t *testing.T) {
	t.Parallel()
	bindAddr, nsdAddr, knotAddr := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	primary, etcd, _ := startHiddenPrimary(t, bindAddr, nsdAddr, knotAddr)
	ref := nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey}
	secondaries := []*nameserver.Server{nameserver.StartBIND(t, bindAddr, ref), nameserver.StartNSD(t, nsdAddr, ref), nameserver.StartKnot(t, knotAddr, ref)}

	// within is how long a change may take to reach a secondary: NOTIFY
	// goes out within a second, then the secondary asks for the SOA and
	// transfers the zone.
	const within = 10 * time.Second
	expect := func(what, name string, qtype uint16, want ...string) {
		t.Helper()
		for _, s := range secondaries {
			eventually(t, within, s.Name+": "+what, func() error {
				return answers(s.Addr, name, qtype, want)
			})
		}
	}

	expect("first transfer", "app.example.com.", dns.TypeA, "203.0.113.10")
	expect("first transfer", "v6.example.com.", dns.TypeAAAA, "2001:db8::10")
	expect("first transfer", "www.example.com.", dns.TypeA, "198.51.100.80")
	checkCopies(t, secondaries, "app.example.com.", "www.example.com.", "alias.example.com.", "info.example.com.", "x.y.example.com.")

	putRecords(t, etcd, a("new.example.com", "192.168.0.60"))
	expect("added record", "new.example.com.", dns.TypeA, "203.0.113.10")

	deleteRecords(t, etcd, "www.example.com")
	expect("deleted record", "www.example.com.", dns.TypeA)

	putGlobal(t, etcd, "203.0.113.20 2001:db8::10")
	expect("global address change", "app.example.com.", dns.TypeA, "203.0.113.20")
	expect("global address change", "new.example.com.", dns.TypeA, "203.0.113.20")
	checkCopies(t, secondaries, "app.example.com.", "new.example.com.")
}

// TestSecondariesRefuseStrangers runs BIND 9, NSD and Knot as secondaries of
// a hidden primary with the settings docs/hidden-primary.md gives them: each transfers
// the zone, and refuses to transfer its copy to anyone else.
func TestSecondariesRefuseStrangers(t *testing.T) {
	addrs := []string{nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)}
	primary, _, _ := startHiddenPrimary(t, addrs...)
	ref := nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey}
	for i, start := range []func(testing.TB, string, nameserver.Primary, ...nameserver.Option) *nameserver.Server{
		nameserver.StartBIND, nameserver.StartNSD, nameserver.StartKnot,
	} {
		s := start(t, addrs[i], ref, nameserver.Refusing())
		eventually(t, 10*time.Second, s.Name+": first transfer", func() error {
			return answers(s.Addr, "app.example.com.", dns.TypeA, []string{"203.0.113.10"})
		})
		if rrs, err := nameserver.TryAXFR(s.Addr, "example.com.", nil); err == nil {
			t.Errorf("%s transferred its copy to a stranger: %d records", s.Name, len(rrs))
		}
	}
}

// answers returns nil when name's records of qtype at addr are exactly want
// (their data, as text), none meaning NXDOMAIN or NODATA.
func answers(addr, name string, qtype uint16, want []string) error {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	r, _, err := (&dns.Client{Timeout: time.Second}).Exchange(m, addr)
	if err != nil {
		return err
	}
	var got []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == qtype {
			got = append(got, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s %s: got %v (%s), want %v", name, dns.TypeToString[qtype], got, dns.RcodeToString[r.Rcode], want)
	}
	return nil
}

// checkCopies transfers each secondary's copy of the zone, and fails t if it
// shows what the external view must not, or lacks one of names.
func checkCopies(t *testing.T, secondaries []*nameserver.Server, names ...string) {
	t.Helper()
	for _, s := range secondaries {
		owners := map[string]bool{}
		for _, rr := range nameserver.AXFR(t, s.Addr, "example.com.", nil) {
			if err := hiddenPrimaryPolicy.CheckRR(rr); err != nil {
				t.Errorf("%s's copy: %v", s.Name, err)
			}
			owners[strings.ToLower(rr.Header().Name)] = true
		}
		for _, name := range names {
			if !owners[name] {
				t.Errorf("%s's copy lacks %s", s.Name, name)
			}
		}
	}
}

// TestHiddenPrimarySerial checks the zone's SOA serial: the same while
// nothing changes (a reload of the same Corefile included), greater (RFC
// 1982) after each kind of change of the external zone, and not smaller
// after a restart. Watchers end with the
// server: nothing of etcdzone is left running.
func TestHiddenPrimarySerial(t *testing.T) {
	before := goroutines.Take()
	primary, etcd, corefile := startHiddenPrimary(t, "*")
	addr := primary.Addr("primary")
	serial := soaSerial(t, addr, "example.com.")

	idle := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(idle) {
		if s := soaSerial(t, addr, "example.com."); s != serial {
			t.Fatalf("serial %d became %d while nothing changed", serial, s)
		}
		time.Sleep(100 * time.Millisecond) // sampling an idle zone
	}

	changes := []struct {
		what   string
		change func()
	}{
		{"record added", func() { putRecords(t, etcd, a("new.example.com", "192.168.0.60")) }},
		{"record deleted", func() { deleteRecords(t, etcd, "app.example.com") }},
		{"global addresses changed", func() { putGlobal(t, etcd, "203.0.113.20") }},
		{"reload with the TTL changed", func() {
			corefile = strings.Replace(corefile, "ttl 900", "ttl 600", 1)
			primary.Reload(t, corefile)
		}},
	}
	for _, c := range changes {
		c.change()
		eventually(t, 3*time.Second, c.what, func() error {
			s, err := serialAt(addr, "example.com.")
			if err != nil {
				return err
			}
			if !serialNewer(s, serial) {
				return fmt.Errorf("serial %d, was %d", s, serial)
			}
			serial = s
			return nil
		})
	}

	primary.Reload(t, corefile)
	if s := soaSerial(t, addr, "example.com."); s != serial {
		t.Errorf("a reload of the same Corefile: serial %d, was %d", s, serial)
	}

	// A burst of changes moves the serial twice within a second; a restart
	// right after does not go back.
	putRecords(t, etcd, a("burst1.example.com", "192.168.0.61"))
	putRecords(t, etcd, a("burst2.example.com", "192.168.0.62"))
	eventually(t, 3*time.Second, "burst", func() error {
		return answers(addr, "burst2.example.com.", dns.TypeA, []string{"203.0.113.20"})
	})
	time.Sleep(1100 * time.Millisecond) // let the burst's second move happen: what is measured is the serial after it
	serial = soaSerial(t, addr, "example.com.")
	primary.Stop()
	restarted := startCoreDNS(t, corefile)
	if s := soaSerial(t, restarted.Addr("primary"), "example.com."); serialNewer(serial, s) {
		t.Errorf("serial went back from %d to %d across a restart", serial, s)
	}
	restarted.Stop()
	if left := before.Left(10*time.Second, "plugin/etcdzone"); len(left) > 0 {
		t.Errorf("%d goroutines of etcdzone left running:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// serialNewer reports whether serial a is greater than b (RFC 1982).
func serialNewer(a, b uint32) bool { return a != b && a-b < 1<<31 }

// TestHiddenPrimaryTransfer checks the transfer from the primary itself: it
// needs TSIG; it holds exactly the records queries get, at their own names;
// an IXFR for the current serial gets the SOA alone, for an older one the
// zone.
func TestHiddenPrimaryTransfer(t *testing.T) {
	primary, _, _ := startHiddenPrimary(t, "*")
	addr := primary.Addr("primary")

	if rrs, err := nameserver.TryAXFR(addr, "example.com.", nil); err == nil {
		t.Errorf("an unsigned AXFR got %d records", len(rrs))
	}

	rrs := nameserver.AXFR(t, addr, "example.com.", &nameserver.TestKey)
	if len(rrs) < 2 || rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("a transfer begins and ends with the SOA:\n%v", rrs)
	}
	owners := map[string]bool{}
	sets := map[[2]string][]dns.RR{} // by owner and type
	for _, rr := range rrs[1 : len(rrs)-1] {
		if err := hiddenPrimaryPolicy.CheckRR(rr); err != nil {
			t.Errorf("transfer: %v", err)
		}
		name := strings.ToLower(rr.Header().Name)
		owners[name] = true
		key := [2]string{name, dns.TypeToString[rr.Header().Rrtype]}
		sets[key] = append(sets[key], rr)
	}
	for _, name := range []string{"app.example.com.", "v6.example.com.", "alias.example.com.", "info.example.com.", "x.y.example.com."} {
		if !owners[name] {
			t.Errorf("the transfer lacks %s", name)
		}
	}
	for key, want := range sets {
		name, qtype := key[0], dns.StringToType[key[1]]
		r := query(t, "tcp", addr, name, qtype)
		var got []dns.RR
		for _, rr := range r.Answer {
			if rr.Header().Rrtype == qtype {
				got = append(got, rr)
			}
		}
		if missing, extra := subtract(want, got), subtract(got, want); len(missing)+len(extra) > 0 {
			t.Errorf("%s %s: the transfer holds %v, a query answers %v", name, key[1], want, got)
		}
	}

	soa := rrs[0].(*dns.SOA)
	// Negative answers carry the zone's SOA, also where globaladdr makes
	// them (a hidden name), and so do the apex's SOA and NS queries.
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"secret.example.com.", dns.TypeA}, {"nothing.example.com.", dns.TypeA}, {"app.example.com.", dns.TypeMX}} {
		r := query(t, "udp", addr, q.name, q.qtype)
		if len(r.Ns) != 1 || r.Ns[0].String() != soa.String() {
			t.Errorf("%s %s: want the transfer's SOA in Authority, got\n%v", q.name, dns.TypeToString[q.qtype], r)
		}
	}
	if r := query(t, "udp", addr, "example.com.", dns.TypeNS); len(r.Answer) != 2 {
		t.Errorf("NS at the apex: want the Corefile's two, got\n%v", r)
	}
	if r := ixfr(t, addr, soa); len(r.Answer) != 1 || r.Answer[0].(*dns.SOA).Serial != soa.Serial {
		t.Errorf("IXFR for the current serial: want the SOA alone, got\n%v", r)
	}
	older := *soa
	older.Serial--
	if r := ixfr(t, addr, &older); len(r.Answer) < 3 {
		t.Errorf("IXFR for an older serial: want the zone, got\n%v", r)
	}
}

// ixfr asks addr for an IXFR from soa's serial, signed with testKey, and
// returns the first message of the reply.
func ixfr(t *testing.T, addr string, soa *dns.SOA) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetIxfr(soa.Hdr.Name, soa.Serial, soa.Ns, soa.Mbox)
	m.SetTsig(nameserver.TestKey.Name, dns.HmacSHA256, 300, time.Now().Unix())
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{nameserver.TestKey.Name: nameserver.TestKey.Secret}}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("IXFR: %v", err)
	}
	return r
}

// subtract returns the records of a that b lacks, comparing data and TTL.
func subtract(a, b []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range a {
		if !slices.ContainsFunc(b, func(o dns.RR) bool { return dns.IsDuplicate(rr, o) && rr.Header().Ttl == o.Header().Ttl }) {
			out = append(out, rr)
		}
	}
	return out
}

// checkHiddenPrimary returns the check of hidden-primary.Corefile, whose
// SECONDARY is secondary: the primary answers as an external view and
// queries signed with the examples' TSIG key as RFC 8945 asks, refuses an
// unsigned AXFR, and a BIND secondary on secondary transfers the zone with
// that key and serves the global address.
func checkHiddenPrimary(secondary string) func(t *testing.T, addr string) {
	return func(t *testing.T, addr string) {
		checkExternal(t, addr)
		checkTSIGKey(t, addr, nameserver.TestKey)
		zone := dns.Fqdn(exampleDomain)
		if rrs, err := nameserver.TryAXFR(addr, zone, nil); err == nil {
			t.Errorf("an unsigned AXFR got %d records", len(rrs))
		}
		bind := nameserver.StartBIND(t, secondary, nameserver.Primary{Zone: zone, Addr: addr, Key: nameserver.TestKey})
		eventually(t, 10*time.Second, "BIND's first transfer", func() error {
			return answers(bind.Addr, "app."+zone, dns.TypeA, []string{exampleGlobal})
		})
		// The primary may move its serial once more after the first transfer
		// (its stamp written at start): BIND follows at the NOTIFY.
		eventually(t, 10*time.Second, "BIND at the primary's serial", func() error {
			got, err := serialAt(bind.Addr, zone)
			if err != nil {
				return err
			}
			want, err := serialAt(addr, zone)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("BIND serves serial %d, the primary %d", got, want)
			}
			return nil
		})
	}
}

// TestHiddenPrimaryNotifyBurst writes 50 keys in a row, as external-dns does
// in one sync, and counts the NOTIFYs the secondary's address receives: a
// few, not 50.
func TestHiddenPrimaryNotifyBurst(t *testing.T) {
	notifies := listenNotify(t)
	primary, etcd, _ := startHiddenPrimary(t, notifies.addr)
	eventually(t, 5*time.Second, "the NOTIFY of the start", func() error { return notifies.atLeast(1) })
	serial := soaSerial(t, primary.Addr("primary"), "example.com.")
	start := notifies.count()

	for i := range 50 {
		putRecords(t, etcd, a(fmt.Sprintf("burst%02d.example.com", i), "192.168.0.70"))
	}
	eventually(t, 5*time.Second, "the serial after the burst", func() error {
		// The burst's last write is in the zone once the serial moved after it.
		if err := answers(primary.Addr("primary"), "burst49.example.com.", dns.TypeA, []string{"203.0.113.10"}); err != nil {
			return err
		}
		return notifies.atLeast(start + 1)
	})
	time.Sleep(1500 * time.Millisecond) // the coalesced moves are at least a second apart: let the last one happen
	if got := notifies.count() - start; got > 5 {
		t.Errorf("50 writes gave %d NOTIFYs, want a few", got)
	}
	if s := soaSerial(t, primary.Addr("primary"), "example.com."); !serialNewer(s, serial) {
		t.Errorf("serial %d after the burst, was %d", s, serial)
	}
}

// notifyCounter is a UDP listener that counts the NOTIFYs it receives and
// acknowledges them, as a secondary does.
type notifyCounter struct {
	addr string
	mu   sync.Mutex
	n    int
}

func listenNotify(t *testing.T) *notifyCounter {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &notifyCounter{addr: pc.LocalAddr().String()}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if r.Opcode == dns.OpcodeNotify {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
		m := new(dns.Msg)
		m.SetReply(r)
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return c
}

func (c *notifyCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *notifyCounter) atLeast(n int) error {
	if got := c.count(); got < n {
		return fmt.Errorf("%d NOTIFYs, want %d", got, n)
	}
	return nil
}

// TestEtcdzoneStartErrors checks that a block with etcdzone but without the
// etcd plugin, with transfer but without an NS set, with a zone etcd does
// not serve, or with a delegation or glue that does not fit the zone, does
// not start, and that the error names the plugin, the file, the line and the
// token.
func TestEtcdzoneStartErrors(t *testing.T) {
	etcd := startEtcd(t)
	block := func(etcdzone, rest string) string {
		return "example.com:{port:dns} {\n\tetcdzone " + etcdzone + "\n" + rest + "\tetcd example.com {\n\t\tendpoint " + etcd.Endpoint() + "\n\t}\n}\n"
	}
	for _, tc := range []struct{ corefile, where, want string }{
		{"example.com:{port:dns} {\n\tetcdzone {\n\t\tns ns1.example.net\n\t}\n}\n", "Corefile:2", "no etcd plugin"},
		{block("", "\ttransfer {\n\t\tto *\n\t}\n"), "Corefile:2", "no ns given"},
		{block("example.org", ""), "Corefile:2", "zone example.org. is not one of the etcd plugin's zones"},
		{block("{\n\t\tdelegate example.org ns1.example.net\n\t}", ""), "Corefile:3", `"example.org.": a delegation must lie below one of the zones`},
		{block("{\n\t\tdelegate example.com ns1.example.net\n\t}", ""), "Corefile:3", `"example.com.": a delegation must lie below`},
		{block("{\n\t\tdelegate lab.example.com ns1.lab.example.com\n\t}", ""), "Corefile:3", `"ns1.lab.example.com." lies inside lab.example.com.: give its address with glue`},
		{block("{\n\t\tns ns1.example.net\n\t\tglue ns9.example.com 192.0.2.1\n\t}", ""), "Corefile:4", `"ns9.example.com." is no name server`},
		{block("{\n\t\tns ns1.example.net\n\t\tglue ns1.example.net 192.0.2.1\n\t}", ""), "Corefile:4", `"ns1.example.net.": glue must lie inside one of the zones`},
		{block("{\n\t\tupdate acme.example.com.\n\t}", ""), "Corefile:3", "update needs the tsig plugin in this server block"},
		{block("{\n\t\tupdate_allow k.example.com. *.example.org A\n\t}", "\ttsig {\n\t\tsecret k.example.com. "+nameserver.TestKey.Secret+"\n\t}\n"), "Corefile:3", `"*.example.org.": update_allow's name must lie in one of the zones`},
		{block("{\n\t\tserial_key /globaladdr/serial/primary\n\t}", ""), "Corefile:3", "serial_key: no transfer plugin in this server block"},
		{block("{\n\t\tns ns1.example.net\n\t\tserial_key /skydns/serial\n\t}", "\ttransfer {\n\t\tto *\n\t}\n"), "Corefile:4", "serial_key /skydns/serial lies in the etcd plugin's path /skydns"},
		{block("{\n\t\tns ns1.example.net\n\t}", "\ttransfer {\n\t\tto *\n\t}\n") + strings.Replace(block("{\n\t\tns ns1.example.net\n\t}", "\ttransfer {\n\t\tto *\n\t}\n"), "{port:dns}", "{port:other}", 1),
			"Corefile:", "another server block keeps the stamp /globaladdr/serial/skydns/internal/example.com."},
	} {
		_, err := tryStartCoreDNS(t, tc.corefile)
		if err == nil {
			t.Errorf("started:\n%s", tc.corefile)
			continue
		}
		for _, want := range []string{"etcdzone", tc.where, tc.want} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	}
}

// TestHiddenPrimaryEtcdRestart checks that the watch of the zone survives an
// etcd restart: a record written afterwards moves the serial.
func TestHiddenPrimaryEtcdRestart(t *testing.T) {
	t.Parallel()
	primary, etcd, _ := startHiddenPrimary(t, "*")
	addr := primary.Addr("primary")
	serial := soaSerial(t, addr, "example.com.")
	etcd.Stop()
	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	putRecords(t, etcd, a("after.example.com", "192.168.0.80"))
	eventually(t, 30*time.Second, "serial after the etcd restart", func() error {
		if s, err := serialAt(addr, "example.com."); err != nil || !serialNewer(s, serial) {
			return fmt.Errorf("serial %d, was %d (%v)", s, serial, err)
		}
		return answers(addr, "after.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})
}

// TestHiddenPrimaryLargeSignedTransfer transfers a zone too large for one
// message with TSIG: every envelope, rewritten by globaladdr, stays signed.
func TestHiddenPrimaryLargeSignedTransfer(t *testing.T) {
	t.Parallel()
	primary, etcd, _ := startHiddenPrimary(t, "*")
	const hosts = 3000 // about 100 KB: at least two envelopes
	for i := range hosts {
		putRecords(t, etcd, externaldns.Record{Name: fmt.Sprintf("h%04d.example.com", i), Type: "A", Targets: []string{"192.168.1.1"}})
	}
	// The zone in memory follows etcd's watch: it holds every host once the
	// last one answers.
	last := fmt.Sprintf("h%04d.example.com.", hosts-1)
	eventually(t, 10*time.Second, "the last host", func() error {
		return answers(primary.Addr("primary"), last, dns.TypeA, []string{"203.0.113.10"})
	})
	rrs := nameserver.AXFR(t, primary.Addr("primary"), "example.com.", &nameserver.TestKey)
	n := 0
	for _, rr := range rrs {
		if err := hiddenPrimaryPolicy.CheckRR(rr); err != nil {
			t.Fatalf("transfer: %v", err)
		}
		if strings.HasPrefix(rr.Header().Name, "h") {
			n++
		}
	}
	if n != hosts {
		t.Errorf("%d hosts transferred, want %d", n, hosts)
	}
}

// soaSerial returns the serial of zone's SOA record at addr.
func soaSerial(t *testing.T, addr, zone string) uint32 {
	t.Helper()
	s, err := serialAt(addr, zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serialAt returns the serial of zone's SOA record at addr, or why there is
// none: soaSerial for a poll (eventually), which a server still loading
// the zone must not fail at once.
func serialAt(addr, zone string) (uint32, error) {
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(m, addr)
	if err != nil {
		return 0, fmt.Errorf("the SOA of %s at %s: %w", zone, addr, err)
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("no SOA for %s at %s:\n%v", zone, addr, r)
}

// eventually polls cond until it returns nil, and fails t with its last
// error when that takes longer than within.
func eventually(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	poll.Until(t, within, what, cond)
}
