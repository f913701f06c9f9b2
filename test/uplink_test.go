package test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	stdlog "log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/internal/routerlab"
	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
	"github.com/pion/stun/v3"
)

// uplinkWithin is how long a test waits for a change a source learns to
// show in an answer: generous, for a loaded machine; the time it takes is
// measured (uplinkLatency), never asserted.
const uplinkWithin = 30 * time.Second

// waitLog waits until the log holds want.
func waitLog(t *testing.T, logs *lockedbuf.Buffer, want string) {
	t.Helper()
	eventually(t, uplinkWithin, "the log line "+strconv.Quote(want), func() error {
		if !strings.Contains(logs.String(), want) {
			return errors.New("not logged yet")
		}
		return nil
	})
}

// metricSum returns the sum of the samples of metric in the exposition body
// whose labels match labels (a regular expression).
func metricSum(body, metric, labels string) float64 {
	var sum float64
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(metric) + `\{([^}]*)\} (\S+)$`)
	match := regexp.MustCompile(labels)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		if match.MatchString(m[1]) {
			v, _ := strconv.ParseFloat(m[2], 64)
			sum += v
		}
	}
	return sum
}

// waitMetric waits until the sum of metric's samples matching labels, at
// the metrics listener url, is above zero.
func waitMetric(t *testing.T, url, metric, labels string) {
	t.Helper()
	eventually(t, uplinkWithin, metric+"{"+labels+"}", func() error {
		if metricSum(scrape(t, url), metric, labels) <= 0 {
			return errors.New("no sample above 0")
		}
		return nil
	})
}

// uplinkLatency measures, from start, how long until addr answers name's
// records of qtype with want, and waits for it: it asks every millisecond,
// so that the time measured is the answer's, not the polling's.
func uplinkLatency(t *testing.T, addr, name string, qtype uint16, start time.Time, want ...string) time.Duration {
	t.Helper()
	for {
		err := answers(addr, name, qtype, want)
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > uplinkWithin {
			t.Fatalf("%s: not within %v: %v", name, uplinkWithin, err)
		}
		time.Sleep(time.Millisecond) // polling: the answer's time is what is measured
	}
}

// watchLeaks asks addr for the A and AAAA records of names, over and over,
// from now until t ends, and fails t if an answer ever holds an internal
// address: whatever the sources do, none leaves the external view.
func watchLeaks(t *testing.T, addr string, names ...string) {
	t.Helper()
	policy := &viewcheck.Policy{Internal: viewcheck.DefaultInternal}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		c := &dns.Client{Timeout: time.Second}
		for {
			for _, name := range names {
				for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
					select {
					case <-stop:
						done <- nil
						return
					default:
					}
					m := new(dns.Msg)
					m.SetQuestion(name, qtype)
					r, _, err := c.Exchange(m, addr)
					if err != nil {
						continue // a timeout under load is no leak
					}
					if err := policy.Check(r); err != nil {
						done <- fmt.Errorf("%s %s: %v", name, dns.TypeToString[qtype], err)
						return
					}
				}
			}
			time.Sleep(10 * time.Millisecond) // a steady trickle of queries, not a flood
		}
	}()
	t.Cleanup(func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("an internal address left the external view: %v", err)
		}
	})
}

// logLatencies logs the percentiles of the samples, the numbers
// BENCHMARKS.md reports.
func logLatencies(t *testing.T, what string, samples []time.Duration) {
	slices.Sort(samples)
	t.Logf("%s: %d samples, p50 %v, p99 %v, max %v", what, len(samples),
		percentile(samples, 50), percentile(samples, 99), samples[len(samples)-1])
}

// checkRcode fails t unless addr answers name's qtype query with rcode.
func checkRcode(t *testing.T, addr, name string, qtype uint16, rcode int) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	r := exchange(t, "udp", addr, m)
	if r.Rcode != rcode {
		t.Fatalf("%s %s: %s, want %s:\n%v", name, dns.TypeToString[qtype], dns.RcodeToString[r.Rcode], dns.RcodeToString[rcode], r)
	}
}

// checkNotReady fails t unless the ready endpoint url answers 503.
func checkNotReady(t *testing.T, url string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("GET %s: %s, want 503 (not ready)", url, resp.Status)
	}
}

// wanAddr adds the address a (written as text) to the lab's WAN, for a
// server of the test's own, and returns it.
func wanAddr(lab *routerlab.Lab, a string) netip.Addr {
	lab.WAN.IP("addr", "add", a+"/24", "dev", "wan0")
	return netip.MustParseAddr(a)
}

// startCoturn runs Debian's coturn as a STUN server on addr:3478 in ns: the
// lab's namespace is its own, so the port is STUN's own, and the sources'
// default port is the one tested.
func startCoturn(t *testing.T, ns *netlab.NS, addr netip.Addr) {
	t.Helper()
	prereq.Program(t, "turnserver", "coturn")
	dir := t.TempDir()
	var out lockedbuf.Buffer
	cmd := ns.Command("turnserver", coturnArgs(addr.String(), "3478", dir)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	// Pdeathsig fires when the thread that started the process ends, and
	// Go ends the threads that netlab's NS.Do locked: the test's goroutine
	// holds on to its thread until the test ends, so that coturn is killed
	// then, and not when an NS.Do happened to run on the thread.
	runtime.LockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting coturn: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("coturn wrote:\n%s", out.String())
		}
	})
	eventually(t, uplinkWithin, "coturn answers STUN on "+addr.String(), func() error {
		_, err := stunBinding(netip.AddrPortFrom(addr, 3478))
		if err != nil {
			return fmt.Errorf("%v; coturn wrote:\n%s", err, out.String())
		}
		return nil
	})
}

// coturnArgs are the arguments of Debian's coturn as a STUN server alone,
// on addr:port, with its files in dir, logging to its standard output.
func coturnArgs(addr, port, dir string) []string {
	return []string{"-n", "--stun-only", "--no-cli", "--no-tls", "--no-dtls",
		"-L", addr, "-p", port, "--log-file", "stdout", "--simple-log",
		"--pidfile", dir + "/turnserver.pid", "--userdb", dir + "/turndb"}
}

// stunBinding sends one Binding request to server and returns the mapped
// address it answers.
func stunBinding(server netip.AddrPort) (netip.Addr, error) {
	conn, err := net.Dial("udp", server.String())
	if err != nil {
		return netip.Addr{}, err
	}
	defer conn.Close()
	req := stun.MustBuild(stun.TransactionID, stun.BindingRequest, stun.Fingerprint)
	if _, err := conn.Write(req.Raw); err != nil {
		return netip.Addr{}, err
	}
	conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 1500)
	n, err := conn.Read(buf)
	if err != nil {
		return netip.Addr{}, err
	}
	m := &stun.Message{Raw: buf[:n]}
	var xor stun.XORMappedAddress
	if err := m.Decode(); err != nil {
		return netip.Addr{}, err
	}
	if err := xor.GetFrom(m); err != nil {
		return netip.Addr{}, err
	}
	a, _ := netip.AddrFromSlice(xor.IP)
	return a, nil
}

// stunResponder is a STUN server of the test's own: it answers each Binding
// request with the client's address, or with the lie it is told.
type stunResponder struct {
	conn net.PacketConn
	lie  atomic.Pointer[netip.Addr]
}

// startSTUNResponder runs a stunResponder on addr:3478 in ns.
func startSTUNResponder(t *testing.T, ns *netlab.NS, addr netip.Addr) *stunResponder {
	t.Helper()
	r := &stunResponder{}
	if err := ns.Do(func() (err error) {
		r.conn, err = net.ListenPacket("udp", netip.AddrPortFrom(addr, 3478).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.conn.Close() })
	go r.serve()
	return r
}

// tell makes r lie: answer a to everyone; the zero Addr makes it honest.
func (r *stunResponder) tell(a netip.Addr) {
	if !a.IsValid() {
		r.lie.Store(nil)
		return
	}
	r.lie.Store(&a)
}

func (r *stunResponder) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := r.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		m := &stun.Message{Raw: append([]byte(nil), buf[:n]...)}
		if m.Decode() != nil || m.Type != stun.BindingRequest {
			continue
		}
		src := from.(*net.UDPAddr)
		ip := src.IP
		if lie := r.lie.Load(); lie != nil {
			ip = lie.AsSlice()
		}
		resp := stun.MustBuild(stun.NewTransactionIDSetter(m.TransactionID), stun.BindingSuccess,
			&stun.XORMappedAddress{IP: ip, Port: src.Port}, stun.Fingerprint)
		r.conn.WriteTo(resp.Raw, from)
	}
}

// testCA is a certificate authority of the test's own, for HTTPS echoes.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate, PEM
}

// newTestCA makes a CA and writes its certificate to a file.
func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "globaladdr test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, file: file}
}

// serverCert returns a certificate the CA issues for ip.
func (ca *testCA) serverCert(t *testing.T, ip netip.Addr) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip.String()},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{ip.AsSlice()}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// httpsEcho is an HTTPS echo service of the test's own: / answers the
// client's address in plain text, /cdn-cgi/trace as Cloudflare's trace
// (key=value lines with ip=); or the lie it is told.
type httpsEcho struct {
	url string // https://IP:PORT
	lie atomic.Pointer[netip.Addr]
}

// startHTTPSEcho runs an httpsEcho on ip in ns, with a certificate of ca.
func startHTTPSEcho(t *testing.T, ns *netlab.NS, ip netip.Addr, ca *testCA) *httpsEcho {
	t.Helper()
	e := &httpsEcho{}
	var l net.Listener
	if err := ns.Do(func() (err error) {
		l, err = net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.url = "https://" + l.Addr().String()
	srv := &http.Server{
		Handler:   e,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{ca.serverCert(t, ip)}},
		ErrorLog:  stdlog.New(ioDiscard{}, "", 0),
	}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })
	return e
}

// ioDiscard drops what the echo's TLS errors would log.
type ioDiscard struct{}

func (ioDiscard) Write(p []byte) (int, error) { return len(p), nil }

// tell makes e lie: answer a to everyone; the zero Addr makes it honest.
func (e *httpsEcho) tell(a netip.Addr) {
	if !a.IsValid() {
		e.lie.Store(nil)
		return
	}
	e.lie.Store(&a)
}

// ServeHTTP implements http.Handler.
func (e *httpsEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	a := ap.Addr().Unmap()
	if lie := e.lie.Load(); lie != nil {
		a = *lie
	}
	if r.URL.Path == "/cdn-cgi/trace" {
		fmt.Fprintf(w, "fl=1\nh=%s\nip=%s\nts=%d\nvisit_scheme=https\n", r.Host, a, time.Now().Unix())
		return
	}
	fmt.Fprintln(w, a)
}
