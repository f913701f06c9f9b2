package probe

import (
	"context"
	"net/netip"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe/router"
)

func init() { Register("natpmp", Router, parseNATPMP) }

// parseNATPMP reads "from natpmp [GATEWAY]".
func parseNATPMP(c *caddy.Controller, args []string) ([]Prober, error) {
	gw, err := parseRouterAt(c, "natpmp", "GATEWAY", args, true)
	if err != nil {
		return nil, err
	}
	return []Prober{&natpmpProber{gw}}, nil
}

// natpmpProber asks the router for its external address with NAT-PMP, and
// hears its announcements of a new one.
type natpmpProber struct{ routerAt }

// Probe implements Prober.
func (p *natpmpProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	gw, err := p.gateway()
	if err != nil {
		return nil, err
	}
	return routerAnswer((&router.NATPMP{Gateway: gw}).Probe(ctx))
}

// Listen implements Listener: an announcement's address is an answer; one
// of no usable address asks for a probe.
func (p *natpmpProber) Listen(ctx context.Context, heard func([]netip.Addr)) error {
	return p.listen(ctx, router.AnnounceNATPMP, func(a netip.Addr) {
		if a.IsValid() {
			heard([]netip.Addr{a})
		} else {
			heard(nil)
		}
	})
}
