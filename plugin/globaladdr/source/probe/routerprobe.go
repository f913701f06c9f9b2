package probe

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe/router"
)

// closeTime bounds Close of a router source: the PCP mapping's deletion.
const closeTime = 2 * time.Second

// routerAt is the router that "from natpmp [GATEWAY]" or "from pcp
// [SERVER]" asks: the one at addr, or the default route's next hop when
// addr is invalid.
type routerAt struct {
	keyword string
	addr    netip.Addr
}

// parseRouterAt reads the optional GATEWAY or SERVER (what) of "from
// keyword": an address, IPv4 only when v4only.
func parseRouterAt(c *caddy.Controller, keyword, what string, args []string, v4only bool) (routerAt, error) {
	r := routerAt{keyword: keyword}
	switch {
	case len(args) > 1:
		return r, c.Errf("%s takes at most one %s, after %q", keyword, what, c.Val())
	case len(args) == 0:
		return r, nil
	}
	a, ok := ParseAddr(args[0])
	if !ok || v4only && !a.Is4() {
		kind := "an IPv4 or IPv6 address"
		if v4only {
			kind = "an IPv4 address"
		}
		return r, c.Errf("%s %s: %q is not %s", keyword, what, args[0], kind)
	}
	r.addr = a
	return r, nil
}

// String names the router source as the Corefile writes it.
func (r routerAt) String() string {
	if r.addr.IsValid() {
		return r.keyword + " " + r.addr.String()
	}
	return r.keyword
}

// gateway returns the router's address: addr, or the default route's next
// hop.
func (r routerAt) gateway() (netip.Addr, error) {
	if r.addr.IsValid() {
		return r.addr, nil
	}
	gw, err := router.DefaultGateway()
	if err != nil {
		return gw, routerError(err)
	}
	return gw, nil
}

// listen hears the router's announcements of kind, and passes them to
// heard.
func (r routerAt) listen(ctx context.Context, kind router.Kind, heard func(netip.Addr)) error {
	gw, err := r.gateway()
	if err != nil {
		return err
	}
	return router.ListenAnnouncements(ctx, gw, kind, heard)
}

// routerAnswer returns a router probe's address as a Probe's answer.
func routerAnswer(a netip.Addr, err error) ([]netip.Addr, error) {
	if err != nil {
		return nil, routerError(err)
	}
	return []netip.Addr{a}, nil
}

// routerError gives err, a router probe's error, its reason.
func routerError(err error) error {
	switch {
	case errors.Is(err, router.ErrNoUsableAddress):
		return Errorf(ReasonNoAddress, "%w", err)
	case errors.Is(err, router.ErrMalformed):
		return Errorf(reasonMalformed, "%w", err)
	case errors.Is(err, router.ErrRefused):
		return Errorf(reasonRejected, "%w", err)
	case errors.Is(err, router.ErrNotFound):
		return Errorf(reasonDiscovery, "%w", err)
	}
	return err
}
