package source

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/router"
)

// closeTime bounds Close of a router source: the PCP mapping's deletion.
const closeTime = 2 * time.Second

// routerError gives err, a router probe's error, its reason.
func routerError(err error) error {
	switch {
	case errors.Is(err, router.ErrNoUsableAddress):
		return Errorf(ReasonNoAddress, "%w", err)
	case errors.Is(err, router.ErrMalformed):
		return Errorf(ReasonMalformed, "%w", err)
	case errors.Is(err, router.ErrRefused):
		return Errorf(ReasonRejected, "%w", err)
	case errors.Is(err, router.ErrNotFound):
		return Errorf(ReasonDiscovery, "%w", err)
	}
	return err
}

// routerAddr reads the optional GATEWAY or SERVER of "from natpmp" and
// "from pcp": an address, IPv4 only when v4only; the invalid Addr when
// there is none, for the default route's next hop.
func routerAddr(c *caddy.Controller, keyword, what string, args []string, v4only bool) (netip.Addr, error) {
	switch {
	case len(args) > 1:
		return netip.Addr{}, c.Errf("%s takes at most one %s, after %q", keyword, what, c.Val())
	case len(args) == 0:
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(args[0])
	if err != nil || a.Zone() != "" || a.Is4In6() || v4only && !a.Is4() {
		kind := "an IPv4 or IPv6 address"
		if v4only {
			kind = "an IPv4 address"
		}
		return netip.Addr{}, c.Errf("%s %s: %q is not %s", keyword, what, args[0], kind)
	}
	return a, nil
}

// gatewayOr returns a, or when it is invalid the default route's next hop.
func gatewayOr(a netip.Addr) (netip.Addr, error) {
	if a.IsValid() {
		return a, nil
	}
	gw, err := router.DefaultGateway()
	if err != nil {
		return gw, routerError(err)
	}
	return gw, nil
}

// listenRouter hears the router's announcements of kind, from the router
// at a or the default route's next hop, and passes them to heard.
func listenRouter(ctx context.Context, a netip.Addr, kind router.Kind, heard func(netip.Addr)) error {
	gw, err := gatewayOr(a)
	if err != nil {
		return err
	}
	return router.ListenAnnouncements(ctx, gw, kind, heard)
}

// routerAnswer returns a probe's address as a Probe's answer.
func routerAnswer(a netip.Addr, err error) ([]netip.Addr, error) {
	if err != nil {
		return nil, routerError(err)
	}
	return []netip.Addr{a}, nil
}

// routerName is the name of a router source as the Corefile writes it.
func routerName(keyword string, a netip.Addr) string {
	if a.IsValid() {
		return keyword + " " + a.String()
	}
	return keyword
}
