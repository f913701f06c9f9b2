package globaladdr

import (
	"net/netip"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin/etcd"

	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// tunnel is the tunnel property: the host name, of a tunnel (a Cloudflare
// Tunnel's UUID.cfargotunnel.com) or of a relay, that the names the view
// would show with a rewritten address stand for as CNAMEs, lower case and
// fully qualified; whether only the names marked for it do (marked); and
// where the Corefile gives it.
type tunnel struct {
	host, where string
	marked      bool
}

func (t tunnel) errorf(format string, args ...any) error {
	return errorAt(t.where, t.host, format, args...)
}

// parseTunnel reads "tunnel HOST [marked]".
func parseTunnel(c *caddy.Controller, args []string) (tunnel, error) {
	if len(args) == 0 || len(args) > 2 {
		return tunnel{}, argErr(c, "tunnel needs one HOST, the host name of the tunnel or relay, and marked for the names marked for it alone")
	}
	if len(args) == 2 && args[1] != "marked" {
		return tunnel{}, c.Errf("tunnel %s %s: the word after HOST can only be marked (the names marked %s: tunnel alone)", args[0], args[1], horizon.RouteProperty)
	}
	host := args[0]
	if _, err := netip.ParseAddr(host); err == nil {
		return tunnel{}, c.Errf("tunnel %q is an address: a CNAME needs a host name (give a global address as an ADDRESS argument or with static)", host)
	}
	if _, ok := dns.IsDomainName(host); !ok || strings.Contains(host, "*") || dns.CountLabel(host) < 2 {
		return tunnel{}, c.Errf("tunnel %q is not a host name, such as UUID.cfargotunnel.com or relay.example.net", host)
	}
	return tunnel{host: dns.CanonicalName(host), where: directive.Where(c), marked: len(args) == 2}, nil
}

// checkTunnel returns why the view's tunnel, if any, can't stand for the
// names of cfg's block: a CNAME replaces every record of its name, which only
// a zone the view builds (etcdzone) can say, so the block's etcdzone must
// serve every zone the block's etcd plugin answers; and a tunnel inside one
// of those zones would be a name of the view itself, internal or a loop.
// It logs what the tunnel does once it can.
func (g *GlobalAddr) checkTunnel(cfg *dnsserver.Config) error {
	if g.tunnel.host == "" {
		return nil
	}
	var served []string
	for _, h := range cfg.Handlers() {
		if b, ok := h.(horizon.Backend); ok {
			served = append(served, b.ServedZones()...)
		}
	}
	if len(served) == 0 {
		return g.tunnel.errorf("no etcdzone in this server block: a CNAME replaces every record of its name, " +
			"which only a zone the view builds can say; put etcdzone in the block")
	}
	if g.policy.Hidden(g.tunnel.host) {
		return g.tunnel.errorf("the tunnel lies in a hidden subtree (hide): the view's CNAMEs would lead to a name it denies; " +
			"give the tunnel or relay a host name outside hide")
	}
	for _, z := range served {
		if dnsname.In(g.tunnel.host, z) {
			return g.tunnel.errorf("the tunnel is inside %s, which this block serves: it would stand for a name of the view itself; "+
				"give the tunnel or relay a host name outside the view's zones", z)
		}
	}
	if e, ok := cfg.Handler("etcd").(*etcd.Etcd); ok {
		if out := unserved(cfg.Handlers(), e.Zones); len(out) > 0 {
			return g.tunnel.errorf("the etcd plugin answers %s, which etcdzone does not serve: the tunnel can't stand for its names there; "+
				"give the etcd plugin etcdzone's zones", strings.Join(out, " "))
		}
	}
	which := "each name"
	if g.tunnel.marked {
		which = "each name marked " + horizon.RouteProperty + ": tunnel"
	}
	log.Infof("tunnel %s: outside, %s of %s with an internal address is a CNAME to it; "+
		"the apex, name servers and delegations can't be one, and show no internal address", g.tunnel.host, which, strings.Join(served, " "))
	return nil
}
