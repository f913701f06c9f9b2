package probe

import (
	"context"
	"net/netip"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe/router"
)

func init() { Register("pcp", Router, parseRouterPCP) }

// pcpLifetime is the lifetime of the PCP mapping asked for: the least
// miniupnpd grants. Each probe renews it.
const pcpLifetime = 120 * time.Second

// parseRouterPCP reads "from pcp [SERVER]".
func parseRouterPCP(c *caddy.Controller, args []string) ([]Prober, error) {
	server, err := parseRouterAt(c, "pcp", "SERVER", args, false)
	if err != nil {
		return nil, err
	}
	return []Prober{&pcpProber{routerAt: server}}, nil
}

// pcpProber learns the router's external address from the answer to a PCP
// mapping it keeps, and hears the router's ANNOUNCE. Probe and Close are
// never concurrent (the runner's contract).
type pcpProber struct {
	routerAt
	client *router.PCP // nil before the first probe
}

// Probe implements Prober.
func (p *pcpProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	server, err := p.gateway()
	if err != nil {
		return nil, err
	}
	if p.client != nil && p.client.Server != server {
		p.Close() // the default route moved: the old router's mapping goes
	}
	if p.client == nil {
		p.client = &router.PCP{Server: server, Lifetime: pcpLifetime}
	}
	return routerAnswer(p.client.Probe(ctx))
}

// pcpRechecks are when an ANNOUNCE asks for further probes: miniupnpd
// announces when the old WAN address goes (a probe then gets network
// failure) and may refuse the mapping's renewals for a moment after the new
// one comes, so that the probe at once may get no address.
var pcpRechecks = []time.Duration{time.Second, 3 * time.Second}

// Listen implements Listener: an ANNOUNCE asks for a probe at once, and
// again after each of pcpRechecks.
func (p *pcpProber) Listen(ctx context.Context, heard func([]netip.Addr)) error {
	var timers []*time.Timer
	for range pcpRechecks {
		t := time.AfterFunc(time.Hour, func() { heard(nil) })
		t.Stop()
		timers = append(timers, t)
	}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()
	return p.listen(ctx, router.AnnouncePCP, func(netip.Addr) {
		heard(nil)
		for i, t := range timers {
			t.Reset(pcpRechecks[i])
		}
	})
}

// Close deletes the mapping.
func (p *pcpProber) Close() error {
	if p.client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTime)
	defer cancel()
	err := p.client.Close(ctx)
	p.client = nil
	return err
}
