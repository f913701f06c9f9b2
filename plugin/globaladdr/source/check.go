package source

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/uplink"
)

// warnTarget warns, at start, when u's check reaches what is not on the Internet (an
// internal, private or loopback address): it would pass while the uplink is
// dead. A host that does not resolve is warned of too.
func warnTarget(ctx context.Context, u *uplink.Uplink, internal func(netip.Addr) bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	host := u.Check.Host()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		log.Warningf("uplink %s: check %s: %v", u.Name, u.Check, err)
		return
	}
	for _, a := range addrs {
		a = a.Unmap()
		if reason := refusal(a, internal); reason != "" {
			log.Warningf("uplink %s: check %s reaches %s, %s: a check passes while the uplink is dead unless it reaches past it, on the Internet", u.Name, u.Check, a, refusalWords(reason))
			return
		}
	}
}
