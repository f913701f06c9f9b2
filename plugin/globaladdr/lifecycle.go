package globaladdr

import (
	"net"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin/etcd"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// start is globaladdr's OnStartup for the server block of cfg: it sets the
// gauge of the addresses in use, and starts the from sources, if any.
func (g *GlobalAddr) start(cfg *dnsserver.Config) error {
	servers := serverLabels(cfg)
	setAddressCount(servers, g.addrs.Load())
	if g.sources == nil {
		return nil
	}
	return g.sources.start(servers, etcdPluginClient(cfg))
}

// stop is globaladdr's OnShutdown, also run for the old instance when the
// Corefile is reloaded: it stops every source and closes what they opened.
func (g *GlobalAddr) stop() error {
	if g.sources == nil {
		return nil
	}
	return g.sources.stop()
}

// serverLabels returns the server label the metrics carry for each listener
// of cfg's server block, as CoreDNS names its servers ("dns://:53").
func serverLabels(cfg *dnsserver.Config) []string {
	var labels []string
	for _, host := range cfg.ListenHosts {
		addr := net.JoinHostPort(host, cfg.Port)
		if a, err := net.ResolveTCPAddr("tcp", addr); err == nil {
			addr = a.String()
		}
		labels = append(labels, cfg.Transport+"://"+addr)
	}
	return labels
}

// etcdPluginClient returns the etcd client of the etcd plugin of cfg's server
// block, nil when the block has none. The chain must be built.
func etcdPluginClient(cfg *dnsserver.Config) *clientv3.Client {
	if e, ok := cfg.Handler("etcd").(*etcd.Etcd); ok {
		return e.Client
	}
	return nil
}

// setAddressCount sets the gauge of the addresses in use; g is nil while
// there are none.
func setAddressCount(servers []string, g *globals) {
	var v4, v6 int
	if g != nil {
		v4, v6 = len(g.v4), len(g.v6)
	}
	for _, server := range servers {
		addressCount.WithLabelValues(server, "ipv4").Set(float64(v4))
		addressCount.WithLabelValues(server, "ipv6").Set(float64(v6))
	}
}
