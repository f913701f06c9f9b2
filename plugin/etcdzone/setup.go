package etcdzone

import (
	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"github.com/miekg/dns"
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	corefile, err := config.Parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	x := &EtcdZone{corefile: *corefile}
	x.cfg = dnsserver.GetConfig(c)
	x.instance = instanceOf(c)
	x.blockZones = plugin.OriginsFromArgsOrServerBlock(nil, c.ServerBlockKeys)
	etcdclient.GuardEtcdSetup(log)
	// The server answers UPDATEs NOTIMP unless a plugin takes them: the
	// zones answer theirs, refused unless the Corefile has update rules.
	x.cfg.AllowOpcode(dns.OpcodeUpdate)
	x.cfg.AddPlugin(func(next plugin.Handler) plugin.Handler {
		x.Next = next
		return x
	})
	expectDoT(c, x.cfg)
	c.OnStartup(func() error { return x.start(x.cfg) })
	c.OnShutdown(x.shutdown)
	return nil
}
