package test

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
)

// BenchmarkRouterChange changes the WAN address of Debian's miniupnpd, in
// the lab, once per iteration, and measures how long each external view
// takes to answer with the new address: from upnp, natpmp and pcp polled
// every 2s (their delay is up to every, half of it on average), and natpmp
// and pcp polled once an hour, which the router's announcements move. It
// reports the median and the 99th percentile per view, in milliseconds,
// from the removal of the old address (when miniupnpd sees the change).
func BenchmarkRouterChange(b *testing.B) {
	if !netlab.Enter(b) {
		return
	}
	lab := routerlab.New(b)
	etcd := startEtcd(b)
	putRecords(b, etcd, a("app.example.com", "192.168.0.51"))
	views := []struct{ name, sources string }{
		{"upnp-every2s", "from upnp " + lab.DescURL() + "\n every 2s"},
		{"natpmp-every2s", "from natpmp\n every 2s"},
		{"pcp-every2s", "from pcp\n every 2s"},
		{"natpmp-announced", "from natpmp\n every 1h"},
		{"pcp-announced", "from pcp\n every 1h"},
	}
	servers := make([]*coreDNS, len(views))
	for i, v := range views {
		servers[i] = startCoreDNS(b, strings.NewReplacer("ETCD", etcd.Endpoint(), "SOURCES", v.sources).Replace(sourcesCorefile))
	}
	took := make([][]time.Duration, len(views))
	addr := routerlab.FirstWAN
	for b.Loop() {
		addr = addr.Next()
		if !addr.Is4() || addr.As4()[3] > 250 {
			addr = netip.MustParseAddr("11.22.33.10")
		}
		// At a random time in the polling period, as a real change.
		time.Sleep(rand.N(2 * time.Second))
		changed := lab.SetWAN(addr)
		var wg sync.WaitGroup
		for i, c := range servers {
			wg.Go(func() {
				took[i] = append(took[i], servedAfter(b, views[i].name, c.Addr("external"), addr, changed))
			})
		}
		wg.Wait()
	}
	for i, v := range views {
		slices.Sort(took[i])
		b.ReportMetric(ms(took[i][len(took[i])/2]), v.name+"-p50-ms")
		b.ReportMetric(ms(took[i][len(took[i])*99/100]), v.name+"-p99-ms")
	}
}

// servedAfter polls server (of the view name) until app.example.com is want, and returns how
// long it took since start; it fails b after sourceDeadline.
func servedAfter(b *testing.B, name, server string, want netip.Addr, start time.Time) time.Duration {
	for {
		err := answers(server, "app.example.com.", dns.TypeA, []string{want.String()})
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > sourceDeadline {
			b.Errorf("%s: after %v: %v", name, sourceDeadline, err)
			return sourceDeadline
		}
		time.Sleep(2 * time.Millisecond) // polling, with a deadline
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
