// Package etcdzone implements a plugin that serves the zones of the etcd
// plugin as an authoritative server does: it follows the etcd tree (package
// etcdtree: one load at one revision, one watch, each key parsed once, for
// every block of the process that reads the tree), gives each zone an index
// of its keys, and builds from it the zone as the block's view shows
// it (package zone; the view, globaladdr, judges the records through package
// view), once per change and off the query path, then swaps it in whole.
// Queries are answered from that zone with the semantics of RFC 1034
// (CNAMEs, NODATA and NXDOMAIN, wildcards, delegations, the apex NS set and
// SOA from the Corefile); the transfer plugin gets the same zone (AXFR) or
// the changes since a secondary's serial from a journal (IXFR), and
// notifies the secondaries when the zone's serial moves; the serial comes
// from etcd's revisions, so every replica publishes the same. It writes to
// etcd only what a TSIG-signed RFC 2136 UPDATE that its rules allow asks
// (ACME challenges; package update).
package etcdzone

import (
	"fmt"
	"sync"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/hosted"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
)

const pluginName = "etcdzone"

var log = clog.NewWithPlugin(pluginName)

// EtcdZone is the etcdzone handler of one server block.
type EtcdZone struct {
	Next plugin.Handler

	// corefile is what the Corefile says of the directive.
	corefile config.Config
	// blockZones are the zones of the directive's server block.
	blockZones []string
	// instance is the Corefile instance's token (see instanceOf).
	instance any
	// cfg is the server block's configuration.
	cfg *dnsserver.Config

	// Set at start-up: the block's etcd plugin, its transfer plugin and
	// its view (each nil when the block has none), and the zones.
	etcd *etcd.Etcd
	xfr  *transfer.Transfer
	// tree is the etcd tree the zones follow, which the block may share
	// with other blocks of its instance; client is its connection to etcd.
	tree   *sharedTree
	client *etcdclient.Client
	view   horizon.View
	// block is what the zones share (package hosted).
	block *hosted.Block
	// zones are the zones; byName has them by their names.
	zones  []*blockZone
	byName dnsname.Zones[*blockZone]
	// stop ends the zones' goroutines; nil before start.
	stop func()

	// mu guards zones and client for Ready, which may be asked while start
	// sets them; queries come after start.
	mu sync.Mutex
}

// Name implements plugin.Handler.
func (x *EtcdZone) Name() string { return pluginName }

// CacheBypassZones implements cache.ZoneBypasser: the block's cache does not
// keep the answers of the plugin's zones, which it answers from memory and
// which change with etcd at any moment (a new host, an ACME challenge): a
// change is in the answers at once, a deleted record gone at once.
func (x *EtcdZone) CacheBypassZones() []string { return x.ServedZones() }

var _ horizon.Backend = (*EtcdZone)(nil)

// ServedZones implements horizon.Backend: the zones the Corefile names, else
// the etcd plugin's. The block's chain must be built.
func (x *EtcdZone) ServedZones() []string {
	if len(x.corefile.Zones) > 0 {
		return x.corefile.Zones
	}
	if e, ok := x.cfg.Handler("etcd").(*etcd.Etcd); ok {
		return e.Zones
	}
	return nil
}

// blockZone is one of the block's zones: its pipeline (package hosted) and
// the labels of its metrics.
type blockZone struct {
	*hosted.Zone
	metrics series
}

// EtcdConfig implements etcdclient.Holder: the block's from etcd sources
// (globaladdr's) read their keys over the connection the Corefile gives
// etcdzone, unless it gives them one of their own.
func (x *EtcdZone) EtcdConfig() (etcdclient.Config, bool) {
	return x.corefile.Conn, x.corefile.Conn.Given()
}

// errorf returns a start-up error naming the plugin and where, the
// Corefile's file and line.
func (x *EtcdZone) errorf(where, format string, args ...any) error {
	return plugin.Error(pluginName, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
}
