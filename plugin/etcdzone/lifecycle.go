package etcdzone

import (
	"context"
	"net"
	"path"
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
	"github.com/globaladdr/globaladdr/plugin/etcdzone/hosted"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/stamp"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
	"github.com/globaladdr/globaladdr/plugin/pkg/serverlabel"
)

// startWait bounds how long start-up waits for the zones' first load, so
// that a started or reloaded server answers from a loaded zone when etcd is
// at hand, and is not held up long when it is not.
const startWait = 2 * time.Second

// start is etcdzone's OnStartup for the server block of cfg, also run for the
// new instance when the Corefile is reloaded. It finds the block's etcd and
// transfer plugins, checks the zones and delegations against them, and
// starts loading and watching each zone; it waits up to startWait for the
// first loads, unless the view has no global addresses yet.
func (x *EtcdZone) start(cfg *dnsserver.Config) error {
	if err := x.findPlugins(cfg); err != nil {
		return err
	}
	zones, unclaim, err := x.prepare(cfg)
	if err != nil {
		return err
	}
	x.run(zones, unclaim)
	if x.view == nil || x.view.Current() != nil {
		// A view without global addresses (its sources, started before,
		// have none) lets no zone be published: waiting would only hold
		// up the listeners.
		x.waitLoaded(startWait)
	}
	return nil
}

// findPlugins finds the block's etcd, transfer, view and tsig plugins, and
// checks that the Corefile's properties have those they need.
func (x *EtcdZone) findPlugins(cfg *dnsserver.Config) error {
	var ok bool
	if x.etcd, ok = cfg.Handler("etcd").(*etcd.Etcd); !ok {
		return x.errorf(x.corefile.Where, "no etcd plugin in this server block: etcdzone serves the tree of the block's etcd plugin; "+
			"add `etcd %s` (its zone and path where external-dns writes) after etcdzone", strings.Join(plugin.OriginsFromArgsOrServerBlock(x.corefile.Zones, strings.Fields(x.corefile.Block)), " "))
	}
	x.xfr, _ = cfg.Handler("transfer").(*transfer.Transfer)
	x.view = horizon.Of(cfg.Handlers())
	if len(x.corefile.DNSSEC.Keys) > 0 && cfg.Handler("dnssec") != nil {
		return x.errorf(x.corefile.DNSSEC.Where, "dnssec: the block's dnssec plugin would sign the signed zone's answers again; use one of them")
	}
	if x.xfr != nil && len(x.corefile.Apex.NS) == 0 {
		return x.errorf(x.corefile.Where, "no ns given: secondaries refuse a zone without NS records")
	}
	if _, ok := cfg.Handler("tsig").(*tsig.TSIGServer); len(x.corefile.Rules) > 0 && !ok {
		return x.errorf(x.corefile.Rules[0].Where, "update needs the tsig plugin in this server block: it checks the UPDATEs' signatures")
	}
	return nil
}

// prepare opens the block's etcd tree and makes its zones, checked against
// the block, with their signers, fallthrough and stamps; unclaim gives the
// stamps' keys up. On an error it releases the tree.
func (x *EtcdZone) prepare(cfg *dnsserver.Config) (zones []*blockZone, unclaim func(), err error) {
	if err := x.open(); err != nil {
		return nil, nil, err
	}
	server := cfg.Transport + "://" + net.JoinHostPort(strings.Join(cfg.ListenHosts, ","), cfg.Port)
	zones, err = x.newZones(server, serverlabel.Of(cfg))
	if err == nil {
		err = x.newSigners(zones)
	}
	if err == nil {
		err = x.startFallthrough(zones)
	}
	if err == nil {
		unclaim, err = x.newStamps(zones)
	}
	if err != nil {
		x.tree.release()
		return nil, nil, err
	}
	return zones, unclaim, nil
}

// newBlock returns what the block's zones share: the tree, once open, and
// the view.
func (x *EtcdZone) newBlock() *hosted.Block {
	nameServers := map[string]bool{}
	for _, name := range x.corefile.NameServers() {
		nameServers[name] = x.corefile.Glued(name)
	}
	return &hosted.Block{
		View:        x.view,
		Tree:        x.tree.tree,
		TreeText:    x.tree.id.String(),
		Etcd:        x.client,
		Key:         x.corefile.Block,
		NameServers: nameServers,
		Served:      x.served,
		Published:   make(chan struct{}, 1),
	}
}

// run puts zones in use, as the view's, and starts following them: their
// loads and watches, etcd's contact, the NOTIFYs and the signing, which
// x.stop ends, giving up the stamps' keys (unclaim) and the tree.
func (x *EtcdZone) run(zones []*blockZone, unclaim func()) {
	unserve := func() {}
	if x.view != nil {
		unserve = x.view.Serve(zoneNames(zones))
	}
	x.setZones(zones)
	leave := x.follow(zones)
	ctx, cancel := context.WithCancel(context.Background())
	var done sync.WaitGroup
	done.Add(1)
	go func() { defer done.Done(); x.watchContact(ctx, zones) }()
	for _, z := range zones {
		if x.xfr != nil {
			done.Add(1)
			go func() { defer done.Done(); x.announce(ctx, z) }()
		}
		done.Add(1)
		go func() { defer done.Done(); z.KeepSigned(ctx) }()
	}
	x.stop = func() {
		unclaim()
		unserve()
		leave()
		cancel()
		done.Wait()
		x.tree.release()
	}
}

// newStamps gives a block with transfer the keeper of its zones' stamps
// (see package stamp), under serial_key or else one of the tree and the
// kind of view (/globaladdr/serial/skydns/external), so that the LAN's view
// and the Internet's of one zone do not take each other's stamps; replicas
// of one Corefile share it. Two blocks of the instance can't keep a zone's
// stamp at one key: they would write each other's, and move the serial at
// each start. It returns what gives the keys up.
func (x *EtcdZone) newStamps(zones []*blockZone) (unclaim func(), err error) {
	treePath := x.tree.id.path
	switch {
	case x.xfr == nil && x.corefile.SerialKey != "":
		return nil, x.errorf(x.corefile.SerialKeyWhere, "serial_key: no transfer plugin in this server block: its zones keep no stamp")
	case x.xfr == nil:
		return func() {}, nil
	case x.corefile.SerialKey != "" && (x.corefile.SerialKey == treePath || strings.HasPrefix(x.corefile.SerialKey, strings.TrimSuffix(treePath, "/")+"/")):
		return nil, x.errorf(x.corefile.SerialKeyWhere, "serial_key %s lies in the etcd plugin's path %s: it would be read as records", x.corefile.SerialKey, treePath)
	}
	prefix := x.corefile.SerialKey
	if prefix == "" {
		kind := "internal"
		if x.view != nil {
			kind = "external"
		}
		prefix = path.Join("/globaladdr/serial", treePath, kind)
	}
	x.block.Stamps = &stamp.Keeper{Client: x.client, Prefix: prefix}
	unclaim, err = x.block.Stamps.Claim(x.instance, zoneNames(zones))
	if err != nil {
		where := x.corefile.SerialKeyWhere
		if where == "" {
			where = x.corefile.Where
		}
		return nil, x.errorf(where, "%v: give one of the blocks a serial_key of its own", err)
	}
	return unclaim, nil
}

// setZones makes zones x's.
func (x *EtcdZone) setZones(zones []*blockZone) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.zones, x.byName = zones, byName(zones)
	x.block.Zones = zoneNames(zones)
	x.block.Names = dnsname.Set(x.block.Zones)
}

// open opens the etcd tree the block's zones follow (see openTree).
func (x *EtcdZone) open() error {
	t, err := x.openTree()
	if err != nil {
		return err
	}
	x.mu.Lock() // Ready may be asked meanwhile
	x.tree, x.client = t, t.client
	x.mu.Unlock()
	return nil
}

// follow has zones follow the block's etcd tree, the block's zones as one
// group (each key is the deepest zone's), and be judged again each time the
// view changes, until leave.
func (x *EtcdZone) follow(zones []*blockZone) (leave func()) {
	apexes := make([]string, len(zones))
	followers := make([]etcdtree.Follower, len(zones))
	for i, z := range zones {
		z.metrics.Loaded(false)
		apexes[i], followers[i] = z.ApexKey(), z.Follower()
	}
	subs := x.tree.tree.Join(x, apexes, followers)
	for i, z := range zones {
		z.Joined(subs[i])
	}
	unsubscribe := func() {}
	if x.view != nil {
		rejudge := func() {
			for _, s := range subs {
				s.Rejudge()
			}
		}
		unsubscribe = x.view.Subscribe(rejudge)
		// A change before Subscribe is judged too; a zone judged at the
		// view's current state is left as it is.
		rejudge()
	}
	return func() {
		unsubscribe()
		for _, s := range subs {
			s.Leave()
		}
	}
}

// newZones returns the zones x serves on server, whose metrics carry the
// labels servers: those the Corefile names, or else the etcd plugin's, each
// with what the Corefile adds to it, once each is known to be one the block
// reaches (a glue or delegation of a zone the block can't reach would be
// reported at its own line, not the zone's).
func (x *EtcdZone) newZones(server string, servers []string) ([]*blockZone, error) {
	x.block = x.newBlock()
	names := x.corefile.Zones
	if len(names) == 0 {
		names = x.etcd.Zones
	}
	etcdZones := dnsname.Set(x.etcd.Zones)
	var zones []*blockZone
	for _, name := range names {
		if !etcdZones.Holds(name) {
			return nil, x.errorf(x.corefile.Where, "zone %s is not one of the etcd plugin's zones %v", name, x.etcd.Zones)
		}
		metrics := series{servers: servers, zone: name}
		config := &zone.Zone{Name: name, Apex: &x.corefile.Apex, Hosts: x.corefile.NameServers(), Upstream: chaser{x}}
		journal := zone.NewJournal(x.corefile.JournalRecords, x.corefile.JournalBytes)
		z := &blockZone{Zone: hosted.New(x.block, config, msg.Path(name, x.etcd.PathPrefix), server, journal, metrics), metrics: metrics}
		zones = append(zones, z)
	}
	if err := x.checkReach(zones); err != nil {
		return nil, err
	}
	if err := x.placeFixed(zones); err != nil {
		return nil, err
	}
	return zones, nil
}

// waitLoaded waits until every zone is loaded, or for d.
func (x *EtcdZone) waitLoaded(d time.Duration) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for !x.Ready() {
		select {
		case <-x.block.Published:
		case <-deadline.C:
			return
		}
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
