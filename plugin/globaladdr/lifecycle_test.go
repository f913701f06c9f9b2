package globaladdr

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
	dto "github.com/prometheus/client_model/go"
)

// sourceFile returns the path of a file for a from file source, and a
// function that writes value to it.
func sourceFile(t *testing.T) (path string, write func(value string)) {
	path = filepath.Join(t.TempDir(), "value")
	return path, func(value string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSubscribe starts a globaladdr whose global addresses come from a file,
// and checks that its subscribers hear of each change after the new
// addresses are in use and counted, and that one hears nothing more once it
// has unsubscribed.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	path, write := sourceFile(t)
	write("203.0.113.10\n")
	g := newTestPlugin(t, "globaladdr {\n from file "+path+"\n}", nil)
	if g.Ready() {
		t.Error("from sources: want not ready before a value")
	}

	// inUse tells the global addresses in use, and the gauge's count of
	// each family.
	inUse := func() string {
		counts := map[string]*dto.Metric{"ipv4": {}, "ipv6": {}}
		for family, m := range counts {
			if err := addressCount.WithLabelValues("dns://127.0.0.1:1053", family).Write(m); err != nil {
				t.Error(err)
			}
		}
		v4, v6 := g.addrs.Load().Addrs()
		return fmt.Sprintf("%v %v, gauge %v %v", v4, v6, counts["ipv4"].Gauge.GetValue(), counts["ipv6"].Gauge.GetValue())
	}
	heard, stays := make(chan string, 10), make(chan string, 10)
	unsubscribe := g.Subscribe(func() { heard <- inUse() })
	g.Subscribe(func() { stays <- inUse() })
	expect := func(subscriber chan string, want string) {
		t.Helper()
		select {
		case got := <-subscriber:
			if got != want {
				t.Errorf("a subscriber saw %s in use, want %s", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("a subscriber did not hear of %s", want)
		}
	}

	if err := g.start(&dnsserver.Config{Transport: "dns", Port: "1053", ListenHosts: []string{"127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.stop() })
	expect(heard, "[203.0.113.10] [], gauge 1 0")
	expect(stays, "[203.0.113.10] [], gauge 1 0")
	if !g.Ready() {
		t.Error("want ready")
	}

	write("203.0.113.11 2001:db8::11\n")
	expect(heard, "[203.0.113.11] [2001:db8::11], gauge 1 1")
	expect(stays, "[203.0.113.11] [2001:db8::11], gauge 1 1")

	unsubscribe()
	write("203.0.113.12\n")
	expect(stays, "[203.0.113.12] [], gauge 1 0")
	select {
	case got := <-heard:
		t.Errorf("heard of a change (%s) after unsubscribing", got)
	default:
	}
}

// TestStateIsASnapshot changes the prefix of a map learned from a file, and
// checks that the view's state made before the change keeps showing the
// old prefix, as its Rules say, that an answer under way when the source
// learned the new one is rewritten with the old one throughout, and that the
// state made after the change, and the next answer, show the new one: with
// a backend subscribed to the view (etcdzone), and with none, where the
// plugin takes the new prefix into use on its own.
func TestStateIsASnapshot(t *testing.T) {
	t.Parallel()
	for _, subscribed := range []bool{true, false} {
		t.Run(fmt.Sprintf("subscribed=%v", subscribed), func(t *testing.T) {
			t.Parallel()
			testStateIsASnapshot(t, subscribed)
		})
	}
}

func testStateIsASnapshot(t *testing.T, subscribed bool) {
	path, write := sourceFile(t)
	write("2001:db8:1::/64\n")
	internal := test.AAAA("app.example.com. 30 IN AAAA fd00:0:0:1::51")
	var asked []string
	g := newTestPlugin(t, "globaladdr 203.0.113.10 {\n map fd00:0:0:1::/64 from file "+path+"\n}", backend(reply{answer: []dns.RR{internal}}, &asked))
	if subscribed {
		g.Subscribe(func() {})
	}
	if err := g.start(&dnsserver.Config{Transport: "dns", Port: "1053", ListenHosts: []string{"127.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.stop() })

	// Subscribed after start, heard is told of a change after the plugin
	// has taken it into use.
	heard := make(chan struct{}, 10)
	g.sources.Subscribe(func(source.Value) { heard <- struct{}{} })
	mapsTo := func(to string) *horizon.State {
		t.Helper()
		for {
			if st := g.Current(); strings.Contains(st.Rules, "map fd00:0:0:1::/64 "+to+"\n") {
				return st
			}
			select {
			case <-heard:
			case <-time.After(20 * time.Second):
				t.Fatalf("the view's state did not come to map into %s:\n%s", to, g.Current().Rules)
			}
		}
	}
	// shows checks that st shows app's address in want, the prefix its
	// Rules map into.
	shows := func(st *horizon.State, want string) {
		t.Helper()
		if !strings.Contains(st.Rules, "map fd00:0:0:1::/64 "+want+"\n") {
			t.Errorf("the state's Rules map into another prefix than %s:\n%s", want, st.Rules)
		}
		if got := st.Show([]dns.RR{internal}); len(got) != 1 || !netip.MustParsePrefix(want).Contains(netip.MustParseAddr(got[0].(*dns.AAAA).AAAA.String())) {
			t.Errorf("the state mapping into %s shows %v", want, got)
		}
	}
	// answer asks for app's address, and returns the one answered.
	answer := func() string {
		t.Helper()
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := g.ServeDNS(context.Background(), rec, new(dns.Msg).SetQuestion("app.example.com.", dns.TypeAAAA)); err != nil || rec.Msg == nil || len(rec.Msg.Answer) != 1 {
			t.Fatalf("app.example.com AAAA: %v %v", err, rec.Msg)
		}
		return rec.Msg.Answer[0].(*dns.AAAA).AAAA.String()
	}

	old := mapsTo("2001:db8:1::/64")
	shows(old, "2001:db8:1::/64")
	if got := answer(); got != "2001:db8:1::51" {
		t.Errorf("app.example.com before the change: %s, want 2001:db8:1::51", got)
	}

	// The backend answers once the new prefix is in use.
	g.Next = plugin.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		write("2001:db8:2::/64\n")
		mapsTo("2001:db8:2::/64")
		return backend(reply{answer: []dns.RR{internal}}, &asked).ServeDNS(ctx, w, r)
	})
	if got := answer(); got != "2001:db8:1::51" {
		t.Errorf("app.example.com, asked before the change and answered after: %s, want 2001:db8:1::51 throughout", got)
	}
	shows(old, "2001:db8:1::/64")

	st := g.Current()
	if st == old {
		t.Fatal("the view's state is the same after the change")
	}
	shows(st, "2001:db8:2::/64")
	g.Next = backend(reply{answer: []dns.RR{internal}}, &asked)
	if got := answer(); got != "2001:db8:2::51" {
		t.Errorf("app.example.com after the change: %s, want 2001:db8:2::51", got)
	}
}
