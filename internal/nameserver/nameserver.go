// Package nameserver runs the name servers of Debian's packages (BIND 9, NSD,
// Knot, PowerDNS, Unbound) on loopback for the tests: as secondaries of a
// zone served by the CoreDNS under test, as primaries, as the providers
// external-dns writes into (BIND by RFC 2136 UPDATE, PowerDNS by its API),
// with their files in a test's temporary directory, and stopped when the
// test ends. It also transfers zones from any of them. It is for tests
// only: nothing of the product imports it.
package nameserver

import (
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// Key is a TSIG key (hmac-sha256) shared by a primary and its secondaries.
type Key struct {
	Name   string // fully qualified
	Secret string // base64
}

// TestKey is the key the tests use.
var TestKey = Key{Name: "transfer.example.com.", Secret: "Y2lAUHa6tPH4+aaV8JQGcmlrTN9zBN9P7/TxTSKGLOk="}

// Server is a name server from a Debian package (BIND, NSD, Knot, ...)
// running on a loopback port, with its data in a test's temporary
// directory.
type Server struct {
	Name string // "BIND", "NSD", "Knot", "PowerDNS" or "Unbound"
	Addr string // host:port it answers on
	out  *lockedbuf.Buffer
}

// Output returns what the server printed so far, for the message of a
// failing test.
func (s *Server) Output() string { return s.out.String() }

// Primary is where a secondary transfers its zone from.
type Primary struct {
	Zone string // fully qualified
	Addr string // host:port of the primary
	Key  Key
	// TLS, when set, makes the secondary transfer over TLS (XoT, RFC 9103)
	// instead of TCP. Knot (Debian's 3.2) cannot.
	TLS *XoT
}

// XoT is a primary's listener for transfers over TLS, and what a
// secondary verifies its certificate with.
type XoT struct {
	Addr     string // host:port of the primary's TLS listener
	CAFile   string // the PEM file of the certificates the secondary trusts
	Hostname string // the name the primary's certificate must carry
}

// Refusing makes a secondary refuse to transfer its copy, as one that
// answers the Internet should, with the setting docs/hidden-primary.md gives
// for it.
// Without it, a secondary lets anyone transfer its copy, so that a test can
// read it.
func Refusing() Option { return func(o *options) { o.refusing = true } }

// Option is an option of the Start functions.
type Option func(*options)

type options struct{ refusing bool }

func optionsOf(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// StartBIND starts BIND 9's named on addr (from FreeLoopbackAddr) as a
// secondary of p.Zone, transferring from p.Addr with p.Key and notified by
// p. It stops when t ends.
func StartBIND(t testing.TB, addr string, p Primary, opts ...Option) *Server {
	t.Helper()
	named := prereq.Program(t, "named", "bind9")
	dir, host, port, phost, pport := secondaryPlaces(t, addr, p)
	allow := "any"
	if optionsOf(opts).refusing {
		allow = "none"
	}
	tlsClause, primaries := "", fmt.Sprintf("%s port %s key %q", phost, pport, p.Key.Name)
	if p.TLS != nil {
		thost, tport, _ := net.SplitHostPort(p.TLS.Addr)
		tlsClause = fmt.Sprintf("tls primary-tls {\n\tca-file %q;\n\tremote-hostname %q;\n};\n", p.TLS.CAFile, p.TLS.Hostname)
		primaries = fmt.Sprintf("%s port %s key %q tls primary-tls", thost, tport, p.Key.Name)
	}
	conf := tlsClause + bindOptions(dir, host, port, "transfer-source "+host+";") + fmt.Sprintf(`%[1]s
zone %[2]q {
	type secondary;
	primaries { %[3]s; };
	file "zone.db";
	allow-transfer { %[4]s; };
};
`, bindKey(p.Key), p.Zone, primaries, allow)
	return startNamed(t, named, dir, addr, conf)
}

// bindOptions returns the options and controls clauses of a named
// answering on host and port only from its own zones, with its files in
// dir; extra is another line of the options clause.
func bindOptions(dir, host, port, extra string) string {
	return fmt.Sprintf(`options {
	directory %[1]q;
	pid-file "%[1]s/named.pid";
	session-keyfile none;
	listen-on port %[3]s { %[2]s; };
	listen-on-v6 { none; };
	recursion no;
	notify no;
	dnssec-validation no;
	%[4]s
};
controls { };
`, dir, host, port, extra)
}

// bindKey returns the key clause of named.conf declaring key.
func bindKey(key Key) string {
	return fmt.Sprintf("key %q {\n\talgorithm hmac-sha256;\n\tsecret %q;\n};", key.Name, key.Secret)
}

// startNamed runs named with the configuration conf, written into dir, and
// waits until it answers on addr.
func startNamed(t testing.TB, named, dir, addr, conf string) *Server {
	t.Helper()
	writeFile(t, filepath.Join(dir, "named.conf"), conf)
	s := &Server{Name: "BIND", Addr: addr}
	s.out = run(t, named, "-g", "-n", "1", "-c", filepath.Join(dir, "named.conf"))
	waitAnswering(t, s)
	return s
}

// StartNSD starts NSD on addr as a secondary of p, as StartBIND starts BIND.
func StartNSD(t testing.TB, addr string, p Primary, opts ...Option) *Server {
	t.Helper()
	nsd := prereq.Program(t, "nsd", "nsd")
	dir, host, port, phost, pport := secondaryPlaces(t, addr, p)
	provide := "provide-xfr: 0.0.0.0/0 NOKEY"
	if optionsOf(opts).refusing {
		provide = "provide-xfr: 0.0.0.0/0 BLOCKED\n\tprovide-xfr: ::0/0 BLOCKED"
	}
	bundle, tlsAuth, request := "", "", fmt.Sprintf("%s@%s %s", phost, pport, p.Key.Name)
	if p.TLS != nil {
		thost, tport, _ := net.SplitHostPort(p.TLS.Addr)
		bundle = fmt.Sprintf("tls-cert-bundle: %q", p.TLS.CAFile)
		tlsAuth = fmt.Sprintf("tls-auth:\n\tname: primary-tls\n\tauth-domain-name: %q\n", p.TLS.Hostname)
		request = fmt.Sprintf("%s@%s %s primary-tls", thost, tport, p.Key.Name)
	}
	conf := nsdServer(dir, host, port, bundle) + fmt.Sprintf(`%[6]skey:
	name: %[3]q
	algorithm: hmac-sha256
	secret: %[4]q
zone:
	name: %[5]q
	zonefile: "zone.db"
	allow-notify: %[1]s NOKEY
	request-xfr: %[2]s
	outgoing-interface: %[8]s
	%[7]s
`, phost, request, p.Key.Name, p.Key.Secret, p.Zone, tlsAuth, provide, host)
	return startNSD(t, nsd, dir, addr, conf)
}

// nsdServer returns the server and remote-control clauses of an NSD
// answering on host and port with its files in dir; extra is another line
// of the server clause.
func nsdServer(dir, host, port, extra string) string {
	return fmt.Sprintf(`server:
	ip-address: %[2]s
	port: %[3]s
	server-count: 1
	username: ""
	chroot: ""
	zonesdir: %[1]q
	database: ""
	pidfile: "%[1]s/nsd.pid"
	xfrdfile: "%[1]s/xfrd.state"
	xfrdir: %[1]q
	zonelistfile: "%[1]s/zone.list"
	verbosity: 2
	hide-version: yes
	%[4]s
remote-control:
	control-enable: no
`, dir, host, port, extra)
}

// startNSD runs NSD with the configuration conf, written into dir, and
// waits until it answers on addr.
func startNSD(t testing.TB, nsd, dir, addr, conf string) *Server {
	t.Helper()
	writeFile(t, filepath.Join(dir, "nsd.conf"), conf)
	s := &Server{Name: "NSD", Addr: addr}
	s.out = run(t, nsd, "-d", "-c", filepath.Join(dir, "nsd.conf"))
	waitAnswering(t, s)
	return s
}

// StartKnot starts Knot DNS on addr as a secondary of p, as StartBIND
// starts BIND.
func StartKnot(t testing.TB, addr string, p Primary, opts ...Option) *Server {
	t.Helper()
	if p.TLS != nil {
		t.Fatal("Knot 3.2 (Debian's) cannot transfer over TLS")
	}
	knotd := prereq.Program(t, "knotd", "knot")
	dir, host, port, phost, pport := secondaryPlaces(t, addr, p)
	acl := "[notify, transfer]"
	if optionsOf(opts).refusing {
		acl = "notify" // Knot transfers to no one an acl does not allow
	}
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
    via: %[2]s
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
    acl: %[10]s
    file: %[9]q
`, dir, host, port, phost, pport, p.Key.Name, p.Key.Secret, p.Zone, filepath.Join(dir, "zone.db"), acl)
	writeFile(t, filepath.Join(dir, "knot.conf"), conf)
	s := &Server{Name: "Knot", Addr: addr}
	s.out = run(t, knotd, "-c", filepath.Join(dir, "knot.conf"))
	waitAnswering(t, s)
	return s
}

// secondaryPlaces returns a directory for a secondary's files, the host and
// port of its addr, and those of its primary.
func secondaryPlaces(t testing.TB, addr string, p Primary) (dir, host, port, phost, pport string) {
	host, port, _ = net.SplitHostPort(addr)
	phost, pport, _ = net.SplitHostPort(p.Addr)
	return t.TempDir(), host, port, phost, pport
}

// waitAnswering waits until s answers queries, whatever it answers.
func waitAnswering(t testing.TB, s *Server) {
	t.Helper()
	c := &dns.Client{Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion(".", dns.TypeSOA)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, _, err := c.Exchange(m, s.Addr); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer on %s:\n%s", s.Name, s.Addr, s.out)
		}
		time.Sleep(50 * time.Millisecond) // polling: the server starts on its own time
	}
}
