package probe

import (
	"context"
	"net/netip"
	"net/url"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe/router"
)

func init() { Register("upnp", Router, parseUPnP) }

// parseUPnP reads "from upnp [URL]", URL being the device description's.
func parseUPnP(c *caddy.Controller, args []string) ([]Prober, error) {
	if len(args) > 1 {
		return nil, c.Errf("upnp takes at most one URL, the device description's, after %q", c.Val())
	}
	p := &upnpProber{}
	if len(args) == 1 {
		u, err := url.Parse(args[0])
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, c.Errf("upnp URL: %q is not an http URL of a device description (http://192.168.0.1:5000/rootDesc.xml, say)", args[0])
		}
		p.UPnP.URL = u
	}
	return []Prober{p}, nil
}

// upnpProber asks the router for its external address with UPnP IGD.
type upnpProber struct{ router.UPnP }

// Probe implements Prober.
func (p *upnpProber) Probe(ctx context.Context) ([]netip.Addr, error) {
	return routerAnswer(p.UPnP.Probe(ctx))
}
