package globaladdr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// testServer is the server label of the sources the tests start.
const testServer = "dns://:53"

// deadline bounds every wait for a source: generous, for a loaded machine.
const deadline = 20 * time.Second

// startSources parses corefile, lets tune adjust the sources (a shorter poll,
// say), starts them as CoreDNS would, and stops them when the test ends.
func startSources(t *testing.T, corefile string, tune func(*sources)) *GlobalAddr {
	t.Helper()
	g, err := parse(caddy.NewTestController("dns", corefile))
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(g.sources)
	}
	if err := g.start(&dnsserver.Config{Transport: "dns", Port: "53", ListenHosts: []string{""}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.stop() })
	return g
}

// current returns g's global addresses, separated by spaces, IPv4 first; ""
// while there are none.
func current(g *GlobalAddr) string {
	addrs := g.addrs.Load()
	if addrs == nil {
		return ""
	}
	var s []string
	for _, ip := range append(addrs.v4, addrs.v6...) {
		s = append(s, ip.String())
	}
	return strings.Join(s, " ")
}

// waitAddrs waits until g's global addresses are want, and returns how long
// that took.
func waitAddrs(t *testing.T, g *GlobalAddr, want string) time.Duration {
	t.Helper()
	return waitFor(t, "global addresses "+want, func() bool { return current(g) == want }, func() string { return current(g) })
}

// waitErrors waits until the source_errors_total of src is at least n.
func waitErrors(t *testing.T, src string, n float64) {
	t.Helper()
	count := func() float64 { return value(sourceErrorCount.WithLabelValues(testServer, src)) }
	waitFor(t, "source errors of "+src, func() bool { return count() >= n }, func() string { return fmt.Sprint(count()) })
}

// waitFor polls until ok, and returns how long that took; the test fails
// when the deadline passes first, showing what got describes.
func waitFor(t *testing.T, what string, ok func() bool, got func() string) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > deadline {
			t.Fatalf("waited %v for %s, have %q", deadline, what, got())
		}
		time.Sleep(5 * time.Millisecond) // polling, with a deadline
	}
	return time.Since(start)
}

// value returns the value of a counter or a gauge.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	if d.Counter != nil {
		return d.Counter.GetValue()
	}
	return d.Gauge.GetValue()
}

// fakeSource is a source that reports what the test sends it.
type fakeSource struct {
	name  string
	first fakeValue
	next  chan fakeValue
	acked chan struct{}
}

type fakeValue struct {
	text string
	err  error
}

func newFakeSource(name string, first fakeValue) *fakeSource {
	return &fakeSource{name: name, first: first, next: make(chan fakeValue), acked: make(chan struct{})}
}

func (f *fakeSource) String() string { return f.name }

func (f *fakeSource) run(ctx context.Context, report func(string, error)) {
	report(f.first.text, f.first.err)
	for {
		select {
		case <-ctx.Done():
			return
		case v := <-f.next:
			report(v.text, v.err)
			f.acked <- struct{}{}
		}
	}
}

// send makes f report v, and returns once the report is taken.
func (f *fakeSource) send(v fakeValue) {
	f.next <- v
	<-f.acked
}

func TestSourceMerge(t *testing.T) {
	a := newFakeSource("fake a "+t.Name(), fakeValue{text: "203.0.113.1 2001:db8::1"})
	b := newFakeSource("fake b "+t.Name(), fakeValue{err: errors.New("not yet")})
	// The Corefile's file sources are replaced by the fakes.
	g := startSources(t, "globaladdr {\n from file /a\n from file /b\n}", func(s *sources) {
		s.feeds = []*feed{newFeed(a), newFeed(b)}
	})

	if g.Ready() || current(g) != "" {
		t.Fatalf("one source of two has a value: want not ready, have %q", current(g))
	}
	if n := value(sourceErrorCount.WithLabelValues(testServer, b.name)); n != 1 {
		t.Errorf("source errors of b: %v, want 1", n)
	}

	b.send(fakeValue{text: "198.51.100.2 203.0.113.1 # the same as a's"})
	if !g.Ready() || current(g) != "203.0.113.1 198.51.100.2 2001:db8::1" {
		t.Fatalf("both sources have a value: want ready with their union, have %q", current(g))
	}
	if v4, v6 := value(addressCount.WithLabelValues(testServer, "ipv4")), value(addressCount.WithLabelValues(testServer, "ipv6")); v4 != 2 || v6 != 1 {
		t.Errorf("addresses gauge: ipv4 %v ipv6 %v, want 2 and 1", v4, v6)
	}

	// Each change to an unusable value is logged and counted, once: the
	// second garbage in a row is not.
	for _, bad := range []fakeValue{{err: errors.New("gone")}, {text: "garbage"}, {text: "192.168.0.1"}, {text: "# nothing"}, {text: "garbage"}, {text: "garbage"}} {
		b.send(bad)
		if current(g) != "203.0.113.1 198.51.100.2 2001:db8::1" {
			t.Fatalf("after %+v: want the last good addresses kept, have %q", bad, current(g))
		}
	}
	if n := value(sourceErrorCount.WithLabelValues(testServer, b.name)); n != 6 {
		t.Errorf("source errors of b: %v, want 6 (one per change to an unusable value)", n)
	}

	a.send(fakeValue{text: "203.0.113.9"})
	if current(g) != "203.0.113.9 198.51.100.2 203.0.113.1" {
		t.Errorf("a changed: have %q, want a's new value and b's last good one", current(g))
	}
}
