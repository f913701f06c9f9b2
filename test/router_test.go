package test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// routerView is one external view of TestRouterSources: its from lines, and
// whether only the router's announcements can bring it a change (every 1h).
type routerView struct {
	name, sources string
	announced     bool
	c             *coreDNS
}

// TestRouterSources runs external views that learn their global address from
// Debian's miniupnpd, in a lab of network namespaces (internal/routerlab):
// from upnp found by SSDP and given the device description's URL, from
// natpmp and from pcp polled every 2s, and from natpmp and from pcp polled
// once an hour, which only the router's announcements can move; and a hidden
// primary (from natpmp) whose BIND secondary follows by NOTIFY. The router's
// WAN address changes; the router goes away (the last good address stays,
// errors are counted) and comes back with another address, then changes
// it again; then a player
// in its place reports carrier-grade NAT's 100.64.1.2, which is refused,
// counted and logged, the last good address kept, and a server starting
// with nothing better answers SERVFAIL and is not ready. No internal address
// is ever served.
func TestRouterSources(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	lab := routerlab.New(t)
	logs := captureLog(t)
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"), a("secret.example.com", "192.168.0.99"))

	bindAddr := nameserver.FreeLoopbackAddr(t)
	primary := startCoreDNS(t, strings.NewReplacer(
		"from etcd /globaladdr/example.com", "from natpmp\n\t\tevery 2s",
		"ETCD", etcd.Endpoint(),
		"TO", bindAddr,
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
	).Replace(hiddenPrimaryCorefile))
	bind := nameserver.StartBIND(t, bindAddr, nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey})

	views := []*routerView{
		{name: "upnp (SSDP)", sources: "from upnp\n every 2s"},
		{name: "upnp URL", sources: "from upnp " + lab.DescURL() + "\n every 2s"},
		{name: "natpmp", sources: "from natpmp\n every 2s"},
		{name: "pcp", sources: "from pcp " + routerlab.RouterLAN.String() + "\n every 2s"},
		{name: "natpmp announced", sources: "from natpmp\n every 1h", announced: true},
		{name: "pcp announced", sources: "from pcp\n every 1h", announced: true},
	}
	for _, v := range views {
		v.c = startRouterView(t, etcd, v.sources)
	}
	// served waits until every view and the secondary serve want, and
	// logs how long each took since start.
	served := func(what string, want netip.Addr, start time.Time, skip func(*routerView) bool) {
		t.Helper()
		for _, v := range views {
			if skip == nil || !skip(v) {
				t.Logf("%s: %s served %v after the change", v.name, what, waitServed(t, v.c, "NOERROR "+want.String(), start))
			}
		}
		eventually(t, sourceDeadline, "BIND secondary: "+what, func() error {
			return answers(bind.Addr, "app.example.com.", dns.TypeA, []string{want.String()})
		})
		t.Logf("BIND secondary (NOTIFY from the hidden primary, from natpmp every 2s): %s served %v after the change", what, time.Since(start))
	}
	served("first address", routerlab.FirstWAN, time.Now(), nil)

	second := netip.MustParseAddr("11.22.33.3")
	changed := lab.SetWAN(second)
	served("new WAN address", second, changed, nil)

	// The router goes away: the last good address stays, errors are
	// counted.
	polled := []string{"upnp", "natpmp", "pcp"}
	errorsBefore := map[string]float64{}
	for _, source := range polled {
		errorsBefore[source] = sourceMetric(t, "coredns_globaladdr_source_errors_total", source)
	}
	lab.Stop()
	for _, source := range polled {
		eventually(t, sourceDeadline, source+" errors counted", func() error {
			if got := sourceMetric(t, "coredns_globaladdr_source_errors_total", source); got <= errorsBefore[source] {
				return fmt.Errorf("%s: %v errors, as many as before the router went away", source, got)
			}
			return nil
		})
	}
	for _, v := range views {
		if got := answer(t, v.c.Addr("external"), "app.example.com"); got != "NOERROR "+second.String() {
			t.Errorf("%s without the router: %q, want the last good address", v.name, got)
		}
	}
	// It comes back with a new address. miniupnpd 2.3.1 announces nothing
	// at its start: the lines polled once an hour keep the last good
	// address until the next change, which it announces.
	third := netip.MustParseAddr("11.22.33.4")
	lab.SetWAN(third)
	back := time.Now()
	lab.Start()
	served("address after the router's return", third, back, func(v *routerView) bool { return v.announced })
	fourth := netip.MustParseAddr("11.22.33.5")
	changed = lab.SetWAN(fourth)
	served("next WAN address", fourth, changed, nil)

	// A router reporting carrier-grade NAT's address: refused, counted and
	// logged; the last good address stays.
	const refused = `coredns_globaladdr_source_refused_total{reason="cgnat"}`
	refusing := []string{"natpmp", "pcp " + routerlab.RouterLAN.String()}
	refusedBefore := map[string]float64{}
	for _, source := range refusing {
		refusedBefore[source] = sourceMetric(t, refused, source)
	}
	player := lab.Play(t, netip.MustParseAddr("100.64.1.2"))
	for _, source := range refusing {
		eventually(t, sourceDeadline, source+": carrier-grade NAT refused", func() error {
			if got := sourceMetric(t, refused, source); got <= refusedBefore[source] {
				return fmt.Errorf("no refusal counted yet")
			}
			return nil
		})
	}
	if !strings.Contains(logs.String(), "100.64.1.2") || !strings.Contains(logs.String(), "carrier-grade NAT") {
		t.Errorf("no log line says that 100.64.1.2 is carrier-grade NAT:\n%s", logs)
	}
	for _, v := range views {
		if got := answer(t, v.c.Addr("external"), "app.example.com"); got != "NOERROR "+fourth.String() {
			t.Errorf("%s with a carrier-grade NAT router: %q, want the last good address", v.name, got)
		}
	}
	// Starting with nothing better: SERVFAIL, not ready.
	fresh := startRouterView(t, etcd, "from upnp "+player.DescURL+"\n every 2s")
	eventually(t, sourceDeadline, "a fresh view refuses carrier-grade NAT", func() error {
		if got := sourceMetric(t, refused, "upnp "+player.DescURL); got == 0 {
			return fmt.Errorf("no refusal counted yet")
		}
		return nil
	})
	if got := answer(t, fresh.Addr("external"), "app.example.com"); got != "SERVFAIL" {
		t.Errorf("starting with a carrier-grade NAT router: %q, want SERVFAIL", got)
	}
	if code := ready(t, fresh.Addr("ready")); code != http.StatusServiceUnavailable {
		t.Errorf("starting with a carrier-grade NAT router: ready answers %d, want 503", code)
	}

	checkCopies(t, []*nameserver.Server{bind}, "app.example.com.")
	if got := answer(t, bind.Addr, "secret.example.com"); got != "NXDOMAIN" {
		t.Errorf("the secondary's secret.example.com: %q, want NXDOMAIN", got)
	}
}

// startRouterView starts an external view of etcd's records whose global
// address comes from sources (sourcesCorefile).
func startRouterView(t *testing.T, etcd *etcdtest.Server, sources string) *coreDNS {
	t.Helper()
	return startCoreDNS(t, strings.NewReplacer("ETCD", etcd.Endpoint(), "SOURCES", sources).Replace(sourcesCorefile))
}

// sourceMetric sums the samples of the counter metric (a name, with
// {label="value"} to match) whose source label begins with source, as the
// process's registry holds them.
func sourceMetric(t *testing.T, metric, source string) float64 {
	t.Helper()
	name, match, _ := strings.Cut(strings.TrimSuffix(metric, "}"), "{")
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if k, v, ok := strings.Cut(match, "="); ok && labels[k] != strings.Trim(v, `"`) {
				continue
			}
			if src := labels["source"]; strings.HasPrefix(src, source) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}
