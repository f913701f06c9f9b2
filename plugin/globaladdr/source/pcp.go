package source

import (
	"context"
	"net/netip"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/router"
)

func init() { RegisterProber("pcp", Router, parseRouterPCP) }

// pcpLifetime is the lifetime of the PCP mapping asked for: the least
// miniupnpd grants. Each probe renews it.
const pcpLifetime = 120 * time.Second

// parseRouterPCP reads "from pcp [SERVER]".
func parseRouterPCP(c *caddy.Controller, args []string) ([]Prober, error) {
	server, err := routerAddr(c, "pcp", "SERVER", args, false)
	if err != nil {
		return nil, err
	}
	return []Prober{&pcpProber{server: server}}, nil
}

// pcpProber learns the router's external address from the answer to a PCP
// mapping it keeps, and hears the router's ANNOUNCE. Probe and Close are
// never concurrent (the runner's contract).
type pcpProber struct {
	server netip.Addr  // invalid: the default route's next hop
	client *router.PCP // nil before the first probe
}

// String implements fmt.Stringer.
func (p *pcpProber) String() string { return routerName("pcp", p.server) }

// Probe implements Prober.
func (p *pcpProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	server, err := gatewayOr(p.server)
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

// pcpRecheck is when an ANNOUNCE asks for a second probe: miniupnpd
// announces a new WAN address before its MAP answers give it, so that the
// probe at once may still get the old one.
const pcpRecheck = time.Second

// Listen implements Listener: an ANNOUNCE asks for a probe at once, and for
// another pcpRecheck later.
func (p *pcpProber) Listen(ctx context.Context, heard func([]netip.Addr)) error {
	recheck := time.AfterFunc(time.Hour, func() { heard(nil) })
	recheck.Stop()
	defer recheck.Stop()
	return listenRouter(ctx, p.server, router.AnnouncePCP, func(netip.Addr) {
		heard(nil)
		recheck.Reset(pcpRecheck)
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
