package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coredns/caddy"

	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// testServer is the server label of the sources the tests start.
const testServer = "dns://:53"

// deadline bounds every wait for a source: generous, for a loaded machine.
const deadline = 20 * time.Second

// newSet returns the sources of the globaladdr block in c, whose
// properties of the sources (IsProperty) it reads as the plugin's setup
// does, passing over the others. The sources refuse the addresses of
// internal.
func newSet(c *caddy.Controller) (*Set, error) {
	var cfg Config
	for c.Next() {
		for c.NextBlock() {
			if property, args := c.Val(), c.RemainingArgs(); IsProperty(property) {
				if err := cfg.Parse(c, property, args); err != nil {
					return nil, err
				}
			}
		}
	}
	return cfg.New(internal)
}

// internal is what the tests' sources refuse as internal addresses.
var internal = internalIn("10.0.0.0/8", "192.168.0.0/16", "fc00::/7")

// internalIn returns a function that reports the addresses in prefixes.
func internalIn(prefixes ...string) func(netip.Addr) bool {
	return func(a netip.Addr) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return netip.MustParsePrefix(p).Contains(a) })
	}
}

// started is a Set a test started, with the Value it last put in use.
type started struct {
	*Set
	inUse atomic.Pointer[Value]
}

// Ready reports whether s has put addresses in use, as the plugin's Ready
// does.
func (s *started) Ready() bool { return s.inUse.Load() != nil }

// startSources reads the sources of corefile, lets tune adjust them (a
// shorter poll, say), and starts them without an etcd plugin's client.
func startSources(t *testing.T, corefile string, tune func(*Set)) *started {
	t.Helper()
	set, err := newSet(caddy.NewTestController("dns", corefile))
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(set)
	}
	return start(t, set, nil)
}

// start starts set as the plugin would, shared being the client of the
// block's etcd plugin, and stops it when the test ends.
func start(t *testing.T, set *Set, shared *clientv3.Client) *started {
	t.Helper()
	s := &started{Set: set}
	if err := set.Start([]string{testServer}, etcdclient.ClientConfig(shared), func(v Value) { s.inUse.Store(&v) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Stop() })
	return s
}

// current returns the addresses s put in use, separated by spaces, IPv4
// first; "" while there are none.
func current(s *started) string {
	v := s.inUse.Load()
	if v == nil {
		return ""
	}
	addrs := slices.Clone(v.Addrs)
	slices.SortStableFunc(addrs, func(a, b netip.Addr) int { return cmp.Compare(a.BitLen(), b.BitLen()) })
	var out []string
	for _, a := range addrs {
		out = append(out, a.String())
	}
	return strings.Join(out, " ")
}

// waitAddrs waits until s's global addresses are want, and returns how long
// that took.
func waitAddrs(t *testing.T, s *started, want string) time.Duration {
	t.Helper()
	return waitFor(t, "global addresses "+want, func() bool { return current(s) == want }, func() string { return current(s) })
}

// waitErrors waits until the source_errors_total of src is at least n.
func waitErrors(t *testing.T, src string, n float64) {
	t.Helper()
	count := func() float64 { return errorCount(src) }
	waitFor(t, "source errors of "+src, func() bool { return count() >= n }, func() string { return fmt.Sprint(count()) })
}

// errorCount returns the source_errors_total of src, a file or etcd
// source, whatever the reason.
func errorCount(src string) float64 {
	return value(sourceErrorCount.WithLabelValues(testServer, src, reasonRead)) +
		value(sourceErrorCount.WithLabelValues(testServer, src, reasonInvalid))
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

// value returns the value of a counter.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	return d.Counter.GetValue()
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

func (f *fakeSource) run(ctx context.Context, report func(string, int64, error)) {
	report(f.first.text, 0, f.first.err)
	for {
		select {
		case <-ctx.Done():
			return
		case v := <-f.next:
			report(v.text, 0, v.err)
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
	s := startSources(t, "globaladdr {\n from file /a\n from file /b\n}", func(set *Set) {
		set.feeds = []*feed{valueFeed(a), valueFeed(b)}
	})

	if s.Ready() || current(s) != "" {
		t.Fatalf("one source of two has a value: want not ready, have %q", current(s))
	}
	if n := errorCount(b.name); n != 1 {
		t.Errorf("source errors of b: %v, want 1", n)
	}

	b.send(fakeValue{text: "198.51.100.2 203.0.113.1 # the same as a's"})
	if !s.Ready() || current(s) != "203.0.113.1 198.51.100.2 2001:db8::1" {
		t.Fatalf("both sources have a value: want ready with their union, have %q", current(s))
	}

	// Each change to an unusable value is logged and counted, once: the
	// second garbage in a row is not.
	for _, bad := range []fakeValue{{err: errors.New("gone")}, {text: "garbage"}, {text: "192.168.0.1"}, {text: "# nothing"}, {text: "garbage"}, {text: "garbage"}} {
		b.send(bad)
		if current(s) != "203.0.113.1 198.51.100.2 2001:db8::1" {
			t.Fatalf("after %+v: want the last good addresses kept, have %q", bad, current(s))
		}
	}
	if n := errorCount(b.name); n != 6 {
		t.Errorf("source errors of b: %v, want 6 (one per change to an unusable value)", n)
	}

	a.send(fakeValue{text: "203.0.113.9"})
	if current(s) != "203.0.113.9 198.51.100.2 203.0.113.1" {
		t.Errorf("a changed: have %q, want a's new value and b's last good one", current(s))
	}
}
