// Package etcdzone implements a plugin that serves the zones of the etcd
// plugin as an authoritative server does: it holds each zone in memory,
// read from etcd at one revision and kept current by one watch, and answers
// queries from it with the semantics of RFC 1034 (CNAMEs, NODATA and
// NXDOMAIN, wildcards, delegations, the apex NS set and SOA from the
// Corefile). It serves the same zone to the transfer plugin (AXFR, IXFR) and
// has it notify the secondaries when the zone's serial moves; the serial
// comes from etcd's revisions, so every replica publishes the same. It
// writes to etcd only what a TSIG-signed RFC 2136 UPDATE that its rules
// allow asks (ACME challenges), and it rewrites nothing: globaladdr, above
// it, makes the external view of what it answers.
package etcdzone

import (
	"context"
	"sync"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/etcdclient"

	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin(pluginName)

// EtcdZone is the etcdzone handler of one server block.
type EtcdZone struct {
	Next plugin.Handler

	// zoneNames are the zones the Corefile names, lower case and fully
	// qualified; none means the etcd plugin's.
	zoneNames   []string
	apex        apex
	delegations []delegation
	glue        []glue
	// rules say who may change what by UPDATE; none: UPDATEs are refused.
	rules []rule
	// updateLease is how long a record written under a rule with a lease
	// lives unless deleted before.
	updateLease time.Duration
	// conn is the etcd connection the Corefile gives the directive; when
	// it gives none, the etcd plugin's endpoints and credentials.
	conn etcdclient.Config
	// where is the Corefile's file and line of the directive, for
	// start-up errors.
	where string
	// cfg is the server block's configuration.
	cfg *dnsserver.Config

	// Set at start-up: the block's etcd plugin, its transfer plugin and
	// its view (each nil when the block has none), and the zones.
	etcd *etcd.Etcd
	xfr  *transfer.Transfer
	// client is the connection to etcd; etcdTTL the etcd plugin on it,
	// which makes the TTLs of keys with a lease.
	client  *etcdclient.Client
	etcdTTL *etcd.Etcd
	view    view
	zones   []*zone
	// stop ends the zones' goroutines; nil before start.
	stop func()

	// mu guards the data and the serial of every zone: a query reads them
	// holding it for reading, a change from etcd writes them holding it.
	// One lock for all zones, so that a CNAME from one zone into another
	// is followed under the lock already held.
	mu sync.RWMutex
}

// view is what etcdzone asks of the plugin that makes the external view of
// its block, globaladdr. A record the view never shows, whatever the
// question (a hidden name, an ownership record, an internal address without
// a global one of its family), is left out of the zone, so that the view
// answers as a secondary holding its transfer does: a name whose records are
// all withheld does not exist, and a wildcard covers it.
type view interface {
	// Withholds reports whether the view never shows rr.
	Withholds(rr dns.RR) bool
	// Subscribe registers f to be called, at once, each time the view's
	// global addresses change, and with them what Withholds says; the
	// returned function removes it.
	Subscribe(f func()) (unsubscribe func())
	// Revision returns the etcd revision at which the view's global
	// addresses were written, 0 when they do not come from etcd: a part
	// of the zone's serial.
	Revision() int64
	// Withhold tells the view that zones hold nothing Withholds names, so
	// that it leaves their hidden names to be answered from them; undo
	// ends it.
	Withhold(zones []string) (undo func())
	// Withheld tells the view the records of a question's name and type
	// that the zone left out of its answer, so that the view counts them
	// as it counts what it drops from answers.
	Withheld(ctx context.Context, rrs []dns.RR)
}

// Name implements plugin.Handler.
func (x *EtcdZone) Name() string { return pluginName }

// CacheBypassZones implements cache.ZoneBypasser: the block's cache does not
// keep the answers of the plugin's zones, which it answers from memory and
// which change with etcd at any moment (a new host, an ACME challenge): a
// change is in the answers at once, a deleted record gone at once.
func (x *EtcdZone) CacheBypassZones() []string {
	if len(x.zoneNames) > 0 {
		return x.zoneNames
	}
	if e, ok := x.cfg.Handler("etcd").(*etcd.Etcd); ok {
		return e.Zones
	}
	return nil
}

// Ready implements ready.Readiness: the plugin is ready once every zone is
// loaded, and while it has heard from etcd within the SOA's expire.
func (x *EtcdZone) Ready() bool {
	if x.expired() {
		return false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, z := range x.zones {
		if z.data == nil {
			return false
		}
	}
	return x.zones != nil
}

// ServeDNS implements plugin.Handler. It answers the queries for its zones
// from memory, and their UPDATEs (refused unless the Corefile has rules for
// them). Zone transfers go down the chain to the transfer plugin, which asks
// Transfer; without one they are refused. Everything else goes down the
// chain untouched.
func (x *EtcdZone) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	var z *zone
	if len(r.Question) == 1 {
		z = x.zoneOf(r.Question[0].Name)
	}
	switch {
	case z == nil && r.Opcode == dns.OpcodeUpdate:
		// The block takes UPDATEs for etcdzone's zones only: none goes
		// down the chain (to a forward plugin, say).
		return dns.RcodeRefused, nil
	case z == nil:
		return plugin.NextOrFailure(x.Name(), x.Next, ctx, w, r)
	case r.Opcode == dns.OpcodeUpdate:
		return x.serveUpdate(ctx, w, r, z)
	case r.Opcode != dns.OpcodeQuery:
		return plugin.NextOrFailure(x.Name(), x.Next, ctx, w, r)
	case x.expired():
		// As a secondary past its expire: no answer from a past that
		// nobody can check.
		return dns.RcodeServerFailure, nil
	}
	switch r.Question[0].Qtype {
	case dns.TypeAXFR, dns.TypeIXFR:
		if x.xfr == nil {
			return dns.RcodeRefused, nil
		}
		return plugin.NextOrFailure(x.Name(), x.Next, ctx, w, r)
	}
	state := request.Request{W: w, Req: r}
	x.mu.RLock()
	m := x.answer(ctx, state, z)
	var withheld []dns.RR
	if x.view != nil && z.data != nil {
		withheld = z.data.withheldAt(state.Name(), state.QType())
	}
	x.mu.RUnlock()
	w.WriteMsg(m)
	if len(withheld) > 0 {
		x.view.Withheld(ctx, withheld)
	}
	return dns.RcodeSuccess, nil
}

// zoneOf returns the zone name is in, nil when it is in none of them.
func (x *EtcdZone) zoneOf(name string) *zone { return deepest(x.zones, name) }

// deepest returns the deepest of zones that name is in, nil when it is in
// none of them. It compares suffixes, allocating nothing: every query of the
// block asks.
func deepest(zones []*zone, name string) *zone {
	var best *zone
	for _, z := range zones {
		if inZone(name, z.name) && (best == nil || len(z.name) > len(best.name)) {
			best = z
		}
	}
	return best
}
