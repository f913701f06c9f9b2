package tsigtime

import (
	"fmt"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/tsig"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	where, err := directive.Bare(c, pluginName)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	cfg := dnsserver.GetConfig(c)
	c.OnStartup(func() error {
		if _, ok := cfg.Handler("tsig").(*tsig.TSIGServer); !ok {
			return plugin.Error(pluginName, fmt.Errorf("%s: no tsig plugin in this server block: tsigtime mends the answers of tsig, which checks the signatures", where))
		}
		return nil
	})
	cfg.AddPlugin(func(next plugin.Handler) plugin.Handler { return TSIGTime{Next: next} })
	return nil
}
