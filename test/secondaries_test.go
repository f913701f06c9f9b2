package test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// tsigKey is a TSIG key (hmac-sha256) shared by a primary and its
// secondaries.
type tsigKey struct {
	name   string // fully qualified
	secret string // base64
}

// testKey is the key the hidden primary tests use.
var testKey = tsigKey{name: "transfer.example.com.", secret: "Y2lAUHa6tPH4+aaV8JQGcmlrTN9zBN9P7/TxTSKGLOk="}

// secondary is a name server from a Debian package (BIND, NSD, Knot), running as a secondary
// of one zone on a loopback port, with its data in a test's temporary
// directory.
type secondary struct {
	name string // "BIND", "NSD" or "Knot"
	addr string // host:port it answers on
	out  *output
}

// primaryRef is where a secondary transfers its zone from.
type primaryRef struct {
	zone string // fully qualified
	addr string // host:port of the hidden primary
	key  tsigKey
}

// startBIND starts BIND 9's named on addr (from freeLoopbackAddr) as a
// secondary of p.zone, transferring from p.addr with p.key, notified by p,
// and letting anyone transfer its copy (so the test can read it). It stops
// when t ends.
func startBIND(t *testing.T, addr string, p primaryRef) *secondary {
	t.Helper()
	named := prereq.Program(t, "named", "bind9")
	dir, host, port, phost, pport := secondaryPlaces(t, addr, p)
	conf := fmt.Sprintf(`options {
	directory %[1]q;
	pid-file %[9]q;
	session-keyfile none;
	listen-on port %[3]s { %[2]s; };
	listen-on-v6 { none; };
	recursion no;
	notify no;
	dnssec-validation no;
	allow-transfer { any; };
};
controls { };
key %[6]q {
	algorithm hmac-sha256;
	secret %[7]q;
};
zone %[8]q {
	type secondary;
	primaries { %[4]s port %[5]s key %[6]q; };
	file "zone.db";
};
`, dir, host, port, phost, pport, p.key.name, p.key.secret, p.zone, filepath.Join(dir, "named.pid"))
	writeFile(t, filepath.Join(dir, "named.conf"), conf)
	s := &secondary{name: "BIND", addr: addr}
	s.out = run(t, named, "-g", "-n", "1", "-c", filepath.Join(dir, "named.conf"))
	waitAnswering(t, s)
	return s
}

// startNSD starts NSD on addr as a secondary of p, as startBIND starts BIND.
func startNSD(t *testing.T, addr string, p primaryRef) *secondary {
	t.Helper()
	nsd := prereq.Program(t, "nsd", "nsd")
	dir, host, port, phost, pport := secondaryPlaces(t, addr, p)
	conf := fmt.Sprintf(`server:
	ip-address: %[2]s
	port: %[3]s
	server-count: 1
	username: ""
	chroot: ""
	zonesdir: %[1]q
	database: ""
	pidfile: %[9]q
	xfrdfile: %[10]q
	xfrdir: %[1]q
	zonelistfile: %[11]q
	verbosity: 2
	hide-version: yes
remote-control:
	control-enable: no
key:
	name: %[6]q
	algorithm: hmac-sha256
	secret: %[7]q
zone:
	name: %[8]q
	zonefile: "zone.db"
	allow-notify: %[4]s NOKEY
	request-xfr: %[4]s@%[5]s %[6]s
	provide-xfr: 0.0.0.0/0 NOKEY
`, dir, host, port, phost, pport, p.key.name, p.key.secret, p.zone,
		filepath.Join(dir, "nsd.pid"), filepath.Join(dir, "xfrd.state"), filepath.Join(dir, "zone.list"))
	writeFile(t, filepath.Join(dir, "nsd.conf"), conf)
	s := &secondary{name: "NSD", addr: addr}
	s.out = run(t, nsd, "-d", "-c", filepath.Join(dir, "nsd.conf"))
	waitAnswering(t, s)
	return s
}

// startKnot starts Knot DNS on addr as a secondary of p, as startBIND
// starts BIND.
func startKnot(t *testing.T, addr string, p primaryRef) *secondary {
	t.Helper()
	knotd := prereq.Program(t, "knotd", "knot")
	dir, host, port, phost, pport := secondaryPlaces(t, addr, p)
	conf := fmt.Sprintf(`server:
    rundir: %[1]q
    listen: %[2]s@%[3]s
database:
    storage: %[1]q
log:
  - target: stderr
    any: info
key:
  - id: %[6]s
    algorithm: hmac-sha256
    secret: %[7]s
remote:
  - id: primary
    address: %[4]s@%[5]s
    key: %[6]s
acl:
  - id: notify
    address: %[4]s
    action: notify
  - id: transfer
    address: 127.0.0.0/8
    action: transfer
zone:
  - domain: %[8]s
    master: primary
    acl: [notify, transfer]
    file: %[9]q
`, dir, host, port, phost, pport, p.key.name, p.key.secret, p.zone, filepath.Join(dir, "zone.db"))
	writeFile(t, filepath.Join(dir, "knot.conf"), conf)
	s := &secondary{name: "Knot", addr: addr}
	s.out = run(t, knotd, "-c", filepath.Join(dir, "knot.conf"))
	waitAnswering(t, s)
	return s
}

// secondaryPlaces returns a directory for a secondary's files, the host and
// port of its addr, and those of its primary.
func secondaryPlaces(t *testing.T, addr string, p primaryRef) (dir, host, port, phost, pport string) {
	host, port, _ = net.SplitHostPort(addr)
	phost, pport, _ = net.SplitHostPort(p.addr)
	return t.TempDir(), host, port, phost, pport
}

// freeLoopbackAddr returns a loopback address with a port that was free for
// TCP and UDP when chosen.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		p, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			p.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port")
	return ""
}

// waitAnswering waits until s answers queries, whatever it answers.
func waitAnswering(t *testing.T, s *secondary) {
	t.Helper()
	c := &dns.Client{Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(".", dns.TypeSOA)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, _, err := c.Exchange(m, s.addr); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer on %s:\n%s", s.name, s.addr, s.out)
		}
		time.Sleep(50 * time.Millisecond) // polling: the server starts on its own time
	}
}

// output collects a process's output, for the messages of failing tests.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// run starts a program in the background and kills it when t ends.
func run(t *testing.T, name string, args ...string) *output {
	t.Helper()
	out := new(output)
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return out
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// axfr transfers zone from addr, signed with key unless key is nil, and
// returns its records; the test fails unless the transfer succeeds.
func axfr(t *testing.T, addr, zone string, key *tsigKey) []dns.RR {
	t.Helper()
	rrs, err := tryAXFR(addr, zone, key)
	if err != nil {
		t.Fatalf("AXFR %s from %s: %v", zone, addr, err)
	}
	return rrs
}

// tryAXFR is axfr that returns the error.
func tryAXFR(addr, zone string, key *tsigKey) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetAxfr(zone)
	tr := &dns.Transfer{DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	if key != nil {
		m.SetTsig(key.name, dns.HmacSHA256, 300, time.Now().Unix())
		tr.TsigSecret = map[string]string{key.name: key.secret}
	}
	envs, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for env := range envs {
		if env.Error != nil {
			return nil, env.Error
		}
		rrs = append(rrs, env.RR...)
	}
	return rrs, nil
}

// soaSerial returns the serial of zone's SOA record at addr.
func soaSerial(t *testing.T, addr, zone string) uint32 {
	t.Helper()
	r := query(t, "udp", addr, zone, dns.TypeSOA)
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial
		}
	}
	t.Fatalf("no SOA for %s at %s:\n%v", zone, addr, r)
	return 0
}

// eventually polls cond every 100 ms until it returns nil, and fails t with
// its last error when that takes longer than within.
func eventually(t *testing.T, within time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(100 * time.Millisecond) // polling: the condition's deadline is the assertion
	}
}
