package source

import (
	"context"
	stdlog "log"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/caddy"

	"github.com/globaladdr/globaladdr/internal/lockedbuf"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// fakeProbers are the probers of the test keywords fakerouter and
// fakeobserver, by their argument: each answers what the test stores.
var fakeProbers sync.Map // string → *fakeProber

// fakeProber answers its stored addresses, or its stored error.
type fakeProber struct {
	name string
	mu   sync.Mutex
	// addrs and err are what Probe returns.
	addrs []netip.Addr
	err   error
}

func (p *fakeProber) String() string { return p.name }

func (p *fakeProber) Probe(context.Context) ([]netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addrs, p.err
}

// answer makes p answer addrs (space-separated), or err.
func (p *fakeProber) answer(addrs string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.addrs, p.err = nil, err
	for _, a := range strings.Fields(addrs) {
		p.addrs = append(p.addrs, netip.MustParseAddr(a))
	}
}

// fake returns the fake prober named name.
func fake(name string) *fakeProber {
	p, _ := fakeProbers.LoadOrStore(name, &fakeProber{name: name})
	return p.(*fakeProber)
}

func init() {
	parse := func(prefix string) probe.ParseFunc {
		return func(c *caddy.Controller, args []string) ([]probe.Prober, error) {
			var ps []probe.Prober
			for _, arg := range args {
				ps = append(ps, fake(prefix+arg))
			}
			return ps, nil
		}
	}
	probe.Register("fakerouter", probe.Router, parse("router "))
	probe.Register("fakeobserver", probe.Observer, parse("observer "))
}

// fastLines makes the set's polled lines probe every few milliseconds.
func fastLines(s *Set) {
	for _, f := range s.feeds {
		if f.line != nil && f.line.every > 0 {
			f.line.every = 10 * time.Millisecond
		}
	}
}

// captureLog sends the log to a buffer until the test ends.
func captureLog(t *testing.T) *lockedbuf.Buffer {
	var logs lockedbuf.Buffer
	stdlog.SetOutput(&logs)
	t.Cleanup(func() { stdlog.SetOutput(os.Stderr) })
	return &logs
}

// waitLog waits until the log holds want.
func waitLog(t *testing.T, logs *lockedbuf.Buffer, want string) {
	t.Helper()
	waitFor(t, "the log line "+want, func() bool { return strings.Contains(logs.String(), want) }, logs.String)
}

func TestLineVote(t *testing.T) {
	logs := captureLog(t)
	a, b, c := fake("observer vote-a"), fake("observer vote-b"), fake("observer vote-c")
	a.answer("203.0.113.7", nil)
	b.answer("203.0.113.7", nil)
	c.answer("198.51.100.66", nil) // the liar
	s := startSources(t, "globaladdr {\n from fakeobserver vote-a vote-b vote-c\n}", fastLines)
	waitAddrs(t, s, "203.0.113.7")

	// Two liars that disagree: no strict majority, the last good address
	// stays; the disagreement is counted and logged.
	b.answer("198.51.100.77", nil)
	line := "fakeobserver vote-a vote-b vote-c"
	waitFor(t, "a disagreement", func() bool { return value(disagreementCount.WithLabelValues(testServer, line)) > 0 }, logs.String)
	waitLog(t, logs, "the servers disagree on the IPv4 address: observer vote-a says 203.0.113.7, observer vote-b says 198.51.100.77, observer vote-c says 198.51.100.66; no strict majority of the 3 that answered; keeping the last good address")
	if current(s) != "203.0.113.7" {
		t.Fatalf("after a disagreement: have %q, want the last good 203.0.113.7", current(s))
	}

	// Two liars that agree are a majority: that is what a vote means.
	b.answer("198.51.100.66", nil)
	waitAddrs(t, s, "198.51.100.66")

	// A server that fails does not vote: one of the two that answer is no
	// strict majority.
	b.answer("", probe.Errorf(probe.ReasonTimeout, "no answer"))
	a.answer("203.0.113.8", nil)
	before := value(disagreementCount.WithLabelValues(testServer, line))
	waitFor(t, "another disagreement", func() bool { return value(disagreementCount.WithLabelValues(testServer, line)) > before }, logs.String)
	if current(s) != "198.51.100.66" {
		t.Fatalf("one against one: have %q, want the last good 198.51.100.66", current(s))
	}
	if value(sourceErrorCount.WithLabelValues(testServer, "observer vote-b", probe.ReasonTimeout)) == 0 {
		t.Error("the failing server's errors are not counted by reason")
	}
}

func TestLineRefusesCGNAT(t *testing.T) {
	logs := captureLog(t)
	r := fake("router cgnat")
	r.answer("100.64.3.4", nil)
	s := startSources(t, "globaladdr {\n from fakerouter cgnat\n}", fastLines)
	waitFor(t, "a refusal", func() bool { return value(refusedCount.WithLabelValues(testServer, "router cgnat", refusedCGNAT)) > 0 }, logs.String)
	if s.Ready() {
		t.Fatalf("with nothing good: ready with %q", current(s))
	}
	waitLog(t, logs, "router cgnat: the router reports WAN address 100.64.3.4; this is carrier-grade NAT")
	waitLog(t, logs, "the external view has no IPv4 global address to serve")

	r.answer("198.51.100.7", nil)
	waitAddrs(t, s, "198.51.100.7")
	r.answer("100.64.3.4", nil)
	waitLog(t, logs, "router cgnat: the router reports WAN address 100.64.3.4; this is carrier-grade NAT (shared address space 100.64.0.0/10, RFC 6598); the Internet cannot reach it; the external view keeps 198.51.100.7")
	for _, bad := range []string{"192.168.1.2", "10.1.2.3", "127.0.0.1", "169.254.1.1", "0.0.0.0", "224.0.0.1", "240.0.0.1", "fd00::1", "fe80::1", "::1"} {
		r.answer(bad, nil)
		waitLog(t, logs, "WAN address "+bad+";")
		if current(s) != "198.51.100.7" {
			t.Fatalf("after %s: have %q, want the last good 198.51.100.7", bad, current(s))
		}
	}
}

func TestLineRefusingBesideObserver(t *testing.T) {
	logs := captureLog(t)
	r, o := fake("router double"), fake("observer double")
	r.answer("192.168.1.2", nil)
	o.answer("203.0.113.99", nil)
	s := startSources(t, "globaladdr {\n from fakerouter double\n from fakeobserver double\n}", fastLines)
	// The router that refuses does not keep the view unready.
	waitAddrs(t, s, "203.0.113.99")
	waitLog(t, logs, "router double: the router reports WAN address 192.168.1.2; this is a private address (RFC 1918)")
	waitLog(t, logs, "observer double sees the uplink as 203.0.113.99: the router sits behind another NAT (double NAT), and 203.0.113.99 is served")

	// Both good: their addresses merge (two uplinks).
	r.answer("198.51.100.1", nil)
	waitAddrs(t, s, "198.51.100.1 203.0.113.99")
	// The router turns CGNAT: its stale address is withdrawn, as the
	// observer speaks for IPv4.
	r.answer("100.64.9.9", nil)
	waitAddrs(t, s, "203.0.113.99")
	// The router fails (away): its last good address stays, as before.
	r.answer("198.51.100.1", nil)
	waitAddrs(t, s, "198.51.100.1 203.0.113.99")
	r.answer("", probe.Errorf(probe.ReasonUnreachable, "gone"))
	waitFor(t, "an error", func() bool {
		return value(sourceErrorCount.WithLabelValues(testServer, "router double", probe.ReasonUnreachable)) > 0
	}, logs.String)
	if current(s) != "198.51.100.1 203.0.113.99" {
		t.Fatalf("router away: have %q, want its last good address kept", current(s))
	}
}

func TestLineFamilies(t *testing.T) {
	captureLog(t)
	o := fake("observer families")
	o.answer("203.0.113.5 2001:db8::5", nil)
	s := startSources(t, "globaladdr {\n from fakeobserver families\n}", fastLines)
	waitAddrs(t, s, "203.0.113.5 2001:db8::5")
	// IPv6 no longer answered: the last good IPv6 address stays.
	o.answer("203.0.113.6", nil)
	waitAddrs(t, s, "203.0.113.6 2001:db8::5")
}
