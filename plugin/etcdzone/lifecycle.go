package etcdzone

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/coredns/coredns/plugin/tsig"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/view"

	"github.com/miekg/dns"
)

// startWait bounds how long start-up waits for the zones' first load, so
// that a started or reloaded server answers from a loaded zone when etcd is
// at hand, and is not held up long when it is not.
const startWait = 2 * time.Second

// start is etcdzone's OnStartup for the server block of cfg, also run for the
// new instance when the Corefile is reloaded. It finds the block's etcd and
// transfer plugins, checks the zones and delegations against them, and
// starts loading and watching each zone; it waits up to startWait for the
// first loads.
func (x *EtcdZone) start(cfg *dnsserver.Config) error {
	var ok bool
	if x.etcd, ok = cfg.Handler("etcd").(*etcd.Etcd); !ok {
		return x.errorf(x.where, "no etcd plugin in this server block")
	}
	x.xfr, _ = cfg.Handler("transfer").(*transfer.Transfer)
	if len(x.dnssec.keys) > 0 && cfg.Handler("dnssec") != nil {
		return x.errorf(x.dnssec.where, "dnssec: the block's dnssec plugin would sign the signed zone's answers again; use one of them")
	}
	if x.xfr != nil && len(x.apex.NS) == 0 {
		return x.errorf(x.where, "no ns given: secondaries refuse a zone without NS records")
	}
	if _, ok := cfg.Handler("tsig").(*tsig.TSIGServer); len(x.rules) > 0 && !ok {
		return x.errorf(x.rules[0].Where, "update needs the tsig plugin in this server block: it checks the UPDATEs' signatures")
	}
	server := cfg.Transport + "://" + net.JoinHostPort(strings.Join(cfg.ListenHosts, ","), cfg.Port)
	zones, err := x.newZones(server)
	if err != nil {
		return err
	}
	if err := x.newSigners(zones); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	var done sync.WaitGroup
	unsubscribe, unserve := func() {}, func() {}
	if x.view = view.Of(cfg.Handlers()); x.view != nil {
		unsubscribe = x.view.Subscribe(func() {
			for _, z := range zones {
				signal(z.rejudge)
			}
		})
		unserve = x.view.Serve(zoneNames(zones))
	}
	x.mu.Lock()
	x.zones = zones
	x.mu.Unlock()
	for _, z := range zones {
		loadedGauge.WithLabelValues(z.server, z.name).Set(0)
		done.Add(1)
		go func() { defer done.Done(); etcdtree.Follow(ctx, x.treeConfig(z), follower{x, z}) }()
		if x.xfr != nil {
			done.Add(1)
			go func() { defer done.Done(); x.announce(ctx, z) }()
		}
		if z.signing != nil {
			done.Add(1)
			go func() { defer done.Done(); z.signing.run(ctx, z) }()
		}
	}
	x.stop = func() {
		unserve()
		unsubscribe()
		cancel()
		done.Wait()
	}
	x.waitLoaded(startWait)
	return nil
}

// newZones returns the zones x serves on server: those the Corefile names,
// or else the etcd plugin's, each with what the Corefile adds to it.
func (x *EtcdZone) newZones(server string) ([]*hosted, error) {
	names := x.zoneNames
	if len(names) == 0 {
		names = x.etcd.Zones
	}
	etcdZones := newZoneSet(x.etcd.Zones)
	var zones []*hosted
	byName := make(map[string]*hosted, len(names))
	for _, name := range names {
		if !etcdZones.holds(name) {
			return nil, x.errorf(x.where, "zone %s is not one of the etcd plugin's zones %v", name, x.etcd.Zones)
		}
		z := &hosted{
			name:        name,
			keys:        etcdtree.Keys{Key: msg.Path(name, x.etcd.PathPrefix)},
			server:      server,
			fixed:       map[string][]dns.RR{},
			journal:     zone.NewJournal(x.journalRecords, x.journalBytes),
			config:      &zone.Zone{Name: name, Apex: &x.apex, Upstream: chaser{x}},
			serialMoved: make(chan struct{}, 1),
			rejudge:     make(chan struct{}, 1),
		}
		zones = append(zones, z)
		byName[strings.ToLower(name)] = z
	}
	// A zone's inner zones are those below it: each zone is found in the
	// zones above its name, one lookup per label, not in every other zone.
	for _, inner := range zones {
		for _, up := range above(inner.name) {
			if z := byName[up]; z != nil {
				z.keys.Inner = append(z.keys.Inner, inner.keys.Key)
			}
		}
	}
	if err := x.placeFixed(zones); err != nil {
		return nil, err
	}
	return zones, nil
}

// treeConfig returns what following z's keys in etcd needs.
func (x *EtcdZone) treeConfig(z *hosted) etcdtree.Config {
	return etcdtree.Config{
		Client: x.etcd.Client,
		Keys:   z.keys,
		Name:   z.name,
		// The watch has a gRPC stream of its own (etcd's client shares
		// one among the watches of the same metadata): etcd reports
		// progress on a stream only once every watch on it has caught
		// up, and the block's other watches (globaladdr's from etcd)
		// must not hold that back.
		Stream:  z.server + " " + z.name,
		Errors:  etcdErrors.WithLabelValues(z.server, z.name),
		Rejudge: z.rejudge,
	}
}

// waitLoaded waits until every zone is loaded, or for d.
func (x *EtcdZone) waitLoaded(d time.Duration) {
	deadline := time.Now().Add(d)
	for !x.Ready() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling the first load, at start-up only
	}
}

// shutdown is etcdzone's OnShutdown, also run for the old instance when the
// Corefile is reloaded: it stops watching.
func (x *EtcdZone) shutdown() error {
	if x.stop != nil {
		x.stop()
	}
	return nil
}

// errorf returns a start-up error naming the plugin and where, the
// Corefile's file and line.
func (x *EtcdZone) errorf(where, format string, args ...any) error {
	return plugin.Error(pluginName, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}
