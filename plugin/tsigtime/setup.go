package tsigtime

import (
	"fmt"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/tsig"
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	where, err := parse(c)
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

// parse reads the tsigtime directive of one server block, which takes no
// arguments and no block, and returns the Corefile's file and line it is at.
func parse(c *caddy.Controller) (where string, err error) {
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return "", c.Errf("%s is given twice in this server block", pluginName)
		}
		where = fmt.Sprintf("%s:%d", c.File(), c.Line())
		if args := c.RemainingArgs(); len(args) > 0 {
			return "", c.Errf("%s takes no arguments, got %q", pluginName, args[0])
		}
		if c.NextBlock() {
			return "", c.Errf("%s takes no block, got %q", pluginName, c.Val())
		}
	}
	return where, nil
}
