package etcdxfr

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/transfer"

	"github.com/globaladdr/globaladdr/plugin/globaladdr"
)

// start is etcdxfr's OnStartup for the server block of cfg, also run for the
// new instance when the Corefile is reloaded. It finds the block's etcd and
// transfer plugins, and starts watching each zone: its etcd keys, and the
// global addresses of the block's globaladdr plugin, if any. A reload counts
// as a change of every zone, since it may change what the zone holds.
func (x *EtcdXfr) start(cfg *dnsserver.Config) error {
	var ok bool
	if x.etcd, ok = cfg.Handler("etcd").(*etcd.Etcd); !ok {
		return x.errorf("no etcd plugin in this server block")
	}
	if x.xfr, ok = cfg.Handler("transfer").(*transfer.Transfer); !ok {
		return x.errorf("no transfer plugin in this server block")
	}
	server := cfg.Transport + "://" + net.JoinHostPort(strings.Join(cfg.ListenHosts, ","), cfg.Port)
	x.zones = map[string]*zone{}
	for _, name := range x.Zones {
		if plugin.Zones(x.etcd.Zones).Matches(name) == "" {
			return x.errorf("zone %s is not one of the etcd plugin's zones %v", name, x.etcd.Zones)
		}
		x.zones[name] = &zone{name: name, path: msg.Path(name, x.etcd.PathPrefix) + "/", changed: make(chan struct{}, 1)}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var done sync.WaitGroup
	var unsubscribe func()
	if g, ok := cfg.Handler("globaladdr").(*globaladdr.GlobalAddr); ok {
		unsubscribe = g.Subscribe(func() {
			for _, z := range x.zones {
				z.change()
			}
		})
	}
	for _, z := range x.zones {
		var reload bool
		z.serial, reload = serialOf(server, z.name)
		if reload {
			z.change()
		}
		done.Add(2)
		go func() { defer done.Done(); x.watch(ctx, z) }()
		go func() { defer done.Done(); x.announce(ctx, z, !reload) }()
	}
	x.stop = func() error {
		if unsubscribe != nil {
			unsubscribe()
		}
		cancel()
		done.Wait()
		return nil
	}
	return nil
}

// shutdown is etcdxfr's OnShutdown, also run for the old instance when the
// Corefile is reloaded: it stops watching.
func (x *EtcdXfr) shutdown() error {
	if x.stop == nil {
		return nil
	}
	return x.stop()
}

func (x *EtcdXfr) errorf(format string, args ...any) error {
	return plugin.Error(pluginName, fmt.Errorf("%s: %s", x.where, fmt.Sprintf(format, args...)))
}
