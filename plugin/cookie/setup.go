package cookie

import (
	"crypto/rand"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

func init() { plugin.Register(pluginName, setup) }

// setup reads the cookie directive and gives the server block a secret of
// its own, drawn at start (and at each reload).
func setup(c *caddy.Controller) error {
	if _, err := directive.Bare(c, pluginName); err != nil {
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
