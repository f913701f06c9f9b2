package globaladdr

import (
	"slices"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
	"github.com/globaladdr/globaladdr/plugin/pkg/serverlabel"

	"github.com/miekg/dns"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// start is globaladdr's OnStartup for the server block of cfg: it sets the
// gauge of the addresses in use, and starts the from sources and the map
// sources, if any, which put each new state of the addresses, and of the
// maps' prefixes, in use.
func (g *GlobalAddr) start(cfg *dnsserver.Config) error {
	if g.unmarked != nil && !marksNames(cfg) {
		return plugin.Error(pluginName, g.unmarked)
	}
	if err := g.checkTunnel(cfg); err != nil {
		return plugin.Error(pluginName, err)
	}
	if err := g.checkWhoami(cfg); err != nil {
		return plugin.Error(pluginName, err)
	}
	servers := serverlabel.Of(cfg)
	setAddressCount(servers, g.addrs.Load())
	if em := followMarks(cfg, servers); em != nil {
		g.etcdMarks.Store(em)
	}
	if g.sources == nil {
		return nil
	}
	if cfg.Handler("transfer") != nil {
		log.Warning(dynamicPrimary)
	}
	g.sources.Subscribe(func(source.Value) { g.renew() })
	err := g.sources.Start(servers, etcdclient.BlockConfig(cfg.Handlers(), etcdPluginClient(cfg)), func(v source.Value) {
		addrs := g.policy.Globals(v.Addrs)
		g.use(addrs, v.Revision)
		setAddressCount(servers, addrs)
	})
	if em := g.etcdMarks.Load(); err != nil && em != nil {
		em.stop() // caddy runs no OnShutdown for a start that failed
	}
	return err
}

// checkWhoami returns why the view can't stand in front of cfg's block:
// whoami answers after it, each client with the client's own address, which
// the view would rewrite as a host's (127.0.0.1 or 192.168.0.10 become the
// global address).
func (g *GlobalAddr) checkWhoami(cfg *dnsserver.Config) error {
	if cfg.Handler("whoami") == nil {
		return nil
	}
	return errorAt(g.where, pluginName, "whoami in this server block: it answers each client with its own address, which the view "+
		"would rewrite as a host's; give globaladdr a backend that holds the zone's hosts (etcdzone, etcd, file, forward), and whoami a block of its own")
}

// marksNames reports whether a backend of cfg's block marks its names:
// etcdzone (a horizon.Backend), or the etcd plugin, whose marks the view reads.
func marksNames(cfg *dnsserver.Config) bool {
	if _, ok := cfg.Handler("etcd").(*etcd.Etcd); ok {
		return true
	}
	return slices.ContainsFunc(cfg.Handlers(), func(h plugin.Handler) bool {
		_, ok := h.(horizon.Backend)
		return ok
	})
}

// dynamicPrimary is the warning for a block that transfers its zones (a
// hidden primary, whose address the secondaries keep) while its global
// address comes from a from source, which exists because it changes.
const dynamicPrimary = "the global address comes from a from source, and this block transfers its zones: " +
	"if it is a hidden primary, its secondaries keep fetching from its old address and refuse NOTIFY from a new one; " +
	"give it an address they can keep (static, a tunnel, a stable IPv6 address) or let the external view answer directly"

// use makes addrs, written in etcd at revision rev (0: not from etcd), the
// global addresses in use, and the view's state at them Current's once
// they are known. The state shows every record at addrs, whatever is in use
// later.
func (g *GlobalAddr) use(addrs *outside.Globals, rev int64) {
	g.addrs.Store(addrs)
	if !addrs.Known() {
		return
	}
	g.state.Store(&horizon.State{Revision: rev, Rules: g.policy.Rules(addrs), Exposes: g.policy.Exposes,
		Show:   func(rrs []dns.RR) []dns.RR { return g.policy.Show(rrs, addrs) },
		ShowAt: func(rrs []dns.RR, at horizon.Place) []dns.RR { return g.policy.ShowOwner(rrs, addrs, at) },
		Tunnel: g.policy.Tunnel(),
	})
}

// stop is globaladdr's OnShutdown, also run for the old instance when the
// Corefile is reloaded: it stops every source and closes what they opened.
func (g *GlobalAddr) stop() error {
	if em := g.etcdMarks.Load(); em != nil {
		em.stop()
	}
	if g.sources == nil {
		return nil
	}
	return g.sources.Stop()
}

// Subscribe implements horizon.View: it registers f to be called each time a
// from source delivered new global addresses, or the same ones written again
// in etcd (horizon.State.Revision), and each time a map's source gave a new
// prefix; addresses and maps given in the Corefile never change while the
// server runs. f is called after the new addresses or prefix are in use, on
// the goroutine of the source that read them, so it must return at once:
// signal a channel, say. The returned function removes the subscription;
// call it when the subscriber shuts down.
func (g *GlobalAddr) Subscribe(f func()) (unsubscribe func()) {
	if g.sources == nil {
		return func() {}
	}
	return g.sources.Subscribe(func(source.Value) { g.renew(); f() })
}

// renew puts in use the prefixes the maps' sources give now, with a new
// state of the view at them (Current), when one of them changed: until
// then, answers and the view's states keep those they were made with.
// start subscribes it to the set, so that answers take a new prefix in a
// block without a backend that subscribes; each of the view's subscribers
// runs it too before it hears of the change (Subscribe), whichever of them
// the set calls first. The set calls its subscribers one at a time, after
// use.
func (g *GlobalAddr) renew() {
	addrs, changed := g.policy.Retarget(g.addrs.Load())
	if !changed {
		return
	}
	var rev int64
	if st := g.state.Load(); st != nil {
		rev = st.Revision
	}
	g.use(addrs, rev)
}

// etcdPluginClient returns the etcd client of the etcd plugin of cfg's server
// block, nil when the block has none. The chain must be built.
func etcdPluginClient(cfg *dnsserver.Config) *clientv3.Client {
	if e, ok := cfg.Handler("etcd").(*etcd.Etcd); ok {
		return e.Client
	}
	return nil
}

// setAddressCount sets the gauge of the addresses in use, g.
func setAddressCount(servers []string, g *outside.Globals) {
	v4, v6 := g.Addrs()
	for _, server := range servers {
		addressCount.WithLabelValues(server, "ipv4").Set(float64(len(v4)))
		addressCount.WithLabelValues(server, "ipv6").Set(float64(len(v6)))
	}
}
