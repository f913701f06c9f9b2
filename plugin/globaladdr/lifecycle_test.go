package globaladdr

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coredns/coredns/core/dnsserver"

	dto "github.com/prometheus/client_model/go"
)

// TestSubscribe starts a globaladdr whose global addresses come from a file,
// and checks that its subscribers hear of each change after the new
// addresses are in use and counted, and that one hears nothing more once it
// has unsubscribed.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wan")
	write := func(value string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
		a := g.addrs.Load()
		return fmt.Sprintf("%v %v, gauge %v %v", a.v4, a.v6, counts["ipv4"].Gauge.GetValue(), counts["ipv6"].Gauge.GetValue())
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
