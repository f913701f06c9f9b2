package router

import (
	"context"
	"net/netip"
	"net/url"
	"testing"

	"github.com/globaladdr/globaladdr/internal/cpuclock"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"
)

// BenchmarkProbe asks Debian's miniupnpd, in the lab, for its WAN address
// once per iteration, with each protocol, and reports the process's CPU time
// per probe, and per hour at the default every (60 probes).
func BenchmarkProbe(b *testing.B) {
	if !netlab.Enter(b) {
		return
	}
	lab := routerlab.New(b)
	desc, _ := url.Parse(lab.DescURL())
	pcp := &PCP{Server: routerlab.RouterLAN}
	defer pcp.Close(context.Background())
	for _, tc := range []struct {
		name string
		p    interface {
			Probe(context.Context) (netip.Addr, error)
		}
	}{{"upnp", &UPnP{URL: desc}}, {"natpmp", &NATPMP{Gateway: routerlab.RouterLAN}}, {"pcp", pcp}} {
		p := tc.p
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			if _, err := p.Probe(ctx); err != nil { // the description, the mapping
				b.Fatal(err)
			}
			before := cpuclock.Used(b)
			for b.Loop() {
				if a, err := p.Probe(ctx); err != nil || a != routerlab.FirstWAN {
					b.Fatalf("%v, %v", a, err)
				}
			}
			cpuclock.Report(b, before, 60)
		})
	}
}
