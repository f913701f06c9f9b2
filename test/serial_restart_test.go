package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// restartCorefile is a hidden primary of example.com, run as its own
// process (../coredns) so that a restart forgets everything but etcd: the
// external view with the global address GLOBAL in the Corefile, HIDE and
// DNSSEC lines of globaladdr's and etcdzone's (or nothing), notifying BIND
// and NSD. LISTEN is its address, METRICS its prometheus listener's.
const restartCorefile = `example.com:PORT {
	bind HOST
	errors
	prometheus METRICS
	tsig {
		secret KEY SECRET
		require AXFR IXFR
	}
	globaladdr GLOBAL {
		ttl 900
		HIDE
	}
	etcdzone {
		ns ns1.example.net ns2.example.net
		refresh 86400
		retry 86400
		DNSSEC
	}
	transfer {
		to TO
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// restartedPrimary is a hidden primary run as a process of ../coredns,
// stopped and started again with a Corefile changed or not.
type restartedPrimary struct {
	t       *testing.T
	coredns string
	dir     string
	addr    string // host:port of its DNS listener
	metrics string // host:port of its prometheus listener
	to      string
	etcd    *etcdtest.Server
	proc    *program
	starts  int
}

// newRestartedPrimary returns a primary to start at a free loopback
// address, notifying to.
func newRestartedPrimary(t *testing.T, coredns string, etcd *etcdtest.Server, to ...string) *restartedPrimary {
	return &restartedPrimary{t: t, coredns: coredns, dir: t.TempDir(), addr: nameserver.FreeLoopbackAddr(t),
		metrics: nameserver.FreeLoopbackAddr(t), to: strings.Join(to, " "), etcd: etcd}
}

// start stops the primary if it runs (SIGTERM, as a Kubernetes rollout
// does), then starts it with the global address global and the lines hide
// and dnssec, and waits until it answers for the zone.
func (p *restartedPrimary) start(global, hide, dnssec string) {
	t := p.t
	t.Helper()
	if p.proc != nil {
		p.proc.signal(t, syscall.SIGTERM)
	}
	host, port, _ := strings.Cut(p.addr, ":")
	corefile := strings.NewReplacer("PORT", port, "HOST", host, "METRICS", p.metrics, "GLOBAL", global, "HIDE", hide, "DNSSEC", dnssec,
		"TO", p.to, "ETCD", p.etcd.Endpoint(), "KEY", nameserver.TestKey.Name, "SECRET", nameserver.TestKey.Secret).Replace(restartCorefile)
	path := filepath.Join(p.dir, "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	p.starts++
	p.proc = startProgram(t, fmt.Sprintf("primary-%s-%d", strings.ReplaceAll(p.addr, ":", "-"), p.starts), exec.Command(p.coredns, "-conf", path), p.dir)
	p.proc.awaitReady(t, 15*time.Second, func() error {
		return answersSOA(p.addr)
	})
}

// serial returns the primary's serial.
func (p *restartedPrimary) serial() uint32 {
	p.t.Helper()
	return soaSerial(p.t, p.addr, "example.com.")
}

// transfers returns how many transfers of each type the running process
// served, from its metrics.
func (p *restartedPrimary) transfers() map[string]string {
	p.t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`coredns_etcdzone_transfers_total\{[^}]*type="(\w+)"[^}]*\} (\d+)`).FindAllStringSubmatch(string(body), -1) {
		got[m[1]] = m[2]
	}
	return got
}

// answersSOA returns nil once addr answers example.com's SOA.
func answersSOA(addr string) error {
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeSOA)
	r, _, err := (&dns.Client{Timeout: time.Second}).Exchange(m, addr)
	if err == nil && (r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0) {
		err = fmt.Errorf("SOA: %s", dns.RcodeToString[r.Rcode])
	}
	return err
}

// TestRestartMovesSecondaries restarts a hidden primary, as a process, with
// its zone changed in each way a Corefile changes it: a new global address,
// hide added, dnssec added, dnssec removed. Each time BIND and NSD, notified,
// hold the new zone, and follow the next change in etcd; neither logs a
// failed incremental transfer. A restart with nothing changed keeps the
// serial, and nothing is transferred. Two replicas of one Corefile,
// restarted one after the other, publish the same serial.
func TestRestartMovesSecondaries(t *testing.T) {
	t.Parallel()
	coredns := builtCoreDNS(t)
	keys := t.TempDir()
	_, keyPrefix := writeKeyIn(t, keys, "example.com.", 257)
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		a("www.example.com", "198.51.100.80"),
		a("grafana.lab.example.com", "192.168.0.60"),
	)
	// Enough hosts that one more is sent as a change, not as the zone.
	for i := range 10 {
		putRecords(t, etcd, a(fmt.Sprintf("host%d.example.com", i), "192.168.0.80"))
	}
	bindAddr, nsdAddr := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	primary := newRestartedPrimary(t, coredns, etcd, bindAddr, nsdAddr)
	primary.start("203.0.113.10", "", "")
	ref := nameserver.Primary{Zone: "example.com.", Addr: primary.addr, Key: nameserver.TestKey}
	secondaries := []*nameserver.Server{nameserver.StartBIND(t, bindAddr, ref), nameserver.StartNSD(t, nsdAddr, ref)}
	expect := func(what, name string, qtype uint16, want ...string) {
		t.Helper()
		for _, s := range secondaries {
			eventually(t, 10*time.Second, s.Name+": "+what, func() error { return answers(s.Addr, name, qtype, want) })
		}
	}
	expect("first transfer", "app.example.com.", dns.TypeA, "203.0.113.10")

	serial := primary.serial()
	primary.start("203.0.113.10", "", "")
	if s := primary.serial(); s != serial {
		t.Errorf("a restart with nothing changed: serial %d, was %d", s, serial)
	}
	// The restarted primary notifies; the secondaries find the zone they
	// hold, and the next change in etcd reaches them as an IXFR from it.
	putRecords(t, etcd, a("after.example.com", "192.168.0.70"))
	expect("a change in etcd after the restart", "after.example.com.", dns.TypeA, "203.0.113.10")
	if got := primary.transfers(); fmt.Sprint(got) != fmt.Sprint(map[string]string{"ixfr": "2"}) {
		t.Errorf("a restart with nothing changed, then a change in etcd: transfers %v, want an IXFR for each secondary", got)
	}

	noHidden := `hide lab.example.com`
	dnssec := "dnssec " + keyPrefix
	steps := []struct {
		what                 string
		global, hide, dnssec string
		check                func()
	}{
		{what: "a new global address", global: "203.0.113.11", check: func() { expect("new address", "app.example.com.", dns.TypeA, "203.0.113.11") }},
		{what: "hide added", global: "203.0.113.11", hide: noHidden, check: func() { expect("hidden", "grafana.lab.example.com.", dns.TypeA) }},
		{what: "dnssec added", global: "203.0.113.11", hide: noHidden, dnssec: dnssec, check: func() { expect("signed", "example.com.", dns.TypeDNSKEY, dnskeyText(t, keyPrefix)) }},
		{what: "dnssec removed", global: "203.0.113.11", hide: noHidden, check: func() { expect("unsigned", "example.com.", dns.TypeDNSKEY) }},
	}
	for i, step := range steps {
		before := primary.serial()
		primary.start(step.global, step.hide, step.dnssec)
		if s := primary.serial(); !serialNewer(s, before) {
			t.Errorf("%s: serial %d after a restart, was %d", step.what, s, before)
		}
		step.check()
		// The next change in etcd goes to the secondaries as a change of
		// the zone they hold.
		name := fmt.Sprintf("after%d.example.com", i+1)
		putRecords(t, etcd, a(name, "192.168.0.70"))
		expect(step.what+", then a change in etcd", name+".", dns.TypeA, step.global)
	}
	for _, s := range secondaries {
		for _, failed := range []string{"IXFR failed", "not exact", "inconsistent", "failed while receiving"} {
			if strings.Contains(s.Output(), failed) {
				t.Errorf("%s logged %q:\n%s", s.Name, failed, s.Output())
			}
		}
	}

	// A second replica of the same Corefile publishes the same serial;
	// both restarted with a new address, one after the other, agree again.
	replica := newRestartedPrimary(t, coredns, etcd, bindAddr, nsdAddr)
	replica.start("203.0.113.11", noHidden, "")
	if a, b := primary.serial(), replica.serial(); a != b {
		t.Errorf("two replicas: serials %d and %d", a, b)
	}
	before := primary.serial()
	primary.start("203.0.113.12", noHidden, "")
	replica.start("203.0.113.12", noHidden, "")
	if a, b := primary.serial(), replica.serial(); a != b || !serialNewer(a, before) {
		t.Errorf("two replicas restarted with a new address: serials %d and %d, were %d", a, b, before)
	}
	expect("the replicas' new address", "app.example.com.", dns.TypeA, "203.0.113.12")
}

// builtCoreDNS returns the path of ../coredns, which make builds.
func builtCoreDNS(t *testing.T) string {
	t.Helper()
	coredns, err := filepath.Abs(filepath.Join("..", "coredns"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(coredns); err != nil {
		prereq.Missing(t, "%s: run make build", coredns)
	}
	return coredns
}

// dnskeyText returns the data of the DNSKEY record of the key files at
// prefix, as answers compares it.
func dnskeyText(t *testing.T, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(prefix + ".key")
	if err != nil {
		t.Fatal(err)
	}
	rr, err := dns.NewRR(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}
