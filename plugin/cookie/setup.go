package cookie

import (
	"crypto/rand"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
)

func init() { plugin.Register(pluginName, setup) }

// setup reads the cookie directive and gives the server block a secret of
// its own, drawn at start (and at each reload).
func setup(c *caddy.Controller) error {
	if err := parse(c); err != nil {
		return plugin.Error(pluginName, err)
	}
	h := &Cookie{}
	if _, err := rand.Read(h.secret[:]); err != nil {
		return plugin.Error(pluginName, err)
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		h.Next = next
		return h
	})
	return nil
}

// parse reads the cookie directive of one server block, which takes no
// arguments and no block.
func parse(c *caddy.Controller) error {
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return c.Errf("%s is given twice in this server block", pluginName)
		}
		if args := c.RemainingArgs(); len(args) > 0 {
			return c.Errf("%s takes no arguments, got %q", pluginName, args[0])
		}
		if c.NextBlock() {
			return c.Errf("%s takes no block, got %q", pluginName, c.Val())
		}
	}
	return nil
}
