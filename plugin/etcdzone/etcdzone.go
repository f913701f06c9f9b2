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
	"context"
	"sync"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/stamp"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

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
	// stamps keeps the zones' stamps (see package stamp); nil when the
	// block transfers nothing.
	stamps *stamp.Keeper
	// zones are the zones; byName has them by their names. published
	// holds a signal while a zone was published for the first time since
	// waitLoaded last looked.
	zones     []*hosted
	byName    dnsname.Zones[*hosted]
	published chan struct{}
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

// Ready implements ready.Readiness: the plugin is ready once every zone is
// loaded, and while it has heard from etcd within the SOA's expire.
func (x *EtcdZone) Ready() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.expired() {
		return false
	}
	for _, z := range x.zones {
		if z.current.Load() == nil {
			return false
		}
	}
	return x.zones != nil
}

// ServeDNS implements plugin.Handler. It answers the queries for its zones
// from memory, but for the names they lack that fallthrough leaves to the
// next plugin, and their UPDATEs (refused unless the Corefile has rules for
// them). Zone transfers go down the chain to the transfer plugin, which asks
// Transfer; without one they are refused. A NOTIFY for them is refused;
// the questions for other names go down the chain untouched.
func (x *EtcdZone) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	var z *hosted
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
		// A NOTIFY (the one other opcode CoreDNS lets through) for a name
		// of the zones: the zones are no secondary's, and below them the
		// etcd plugin would answer it as a query, from etcd as it is.
		return dns.RcodeRefused, nil
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
	m := x.reply(ctx, w, r, z)
	if m == nil {
		return x.passOn(ctx, w, r)
	}
	w.WriteMsg(m)
	x.judged(ctx, r.Question[0], z)
	return dns.RcodeSuccess, nil
}

// reply returns the reply to r, a query for a name in z; nil when
// fallthrough leaves the name to the next plugin. It is kept out of
// ServeDNS, which writes the reply: the query's goroutine writes it through
// every plugin's ResponseWriter above, and a stack that outgrows its first
// size there is copied whole (two fifths of the external example's CPU,
// before issue 36).
//
//go:noinline
func (x *EtcdZone) reply(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, z *hosted) *dns.Msg {
	state := request.Request{W: w, Req: r}
	m := x.answer(ctx, state, z)
	if x.fallsThrough(state, z, m) {
		return nil
	}
	x.withoutHiddenSOA(m)
	return m
}

// withoutHiddenSOA leaves the SOA out of m, a negative answer, when the
// view hides it (the apex of a reverse zone of internal addresses): as the
// view's rewrite leaves it out of the answers of other backends.
func (x *EtcdZone) withoutHiddenSOA(m *dns.Msg) {
	if x.view == nil || len(m.Answer) > 0 || len(m.Ns) != 1 || m.Ns[0].Header().Rrtype != dns.TypeSOA {
		return
	}
	if st := x.view.Current(); st != nil && len(st.Show(m.Ns)) == 0 {
		m.Ns = nil
	}
}

// judged tells the view, if any, what it did to the records of q's name and
// type in z (zone.Version.Judged), for its metrics.
func (x *EtcdZone) judged(ctx context.Context, q dns.Question, z *hosted) {
	if x.view == nil {
		return
	}
	if v := z.current.Load(); v != nil {
		if rrs := v.Judged(dns.CanonicalName(q.Name), q.Qtype); len(rrs) > 0 {
			x.view.Judged(ctx, rrs)
		}
	}
}

// zoneOf returns the zone name is in, nil when it is in none of them.
func (x *EtcdZone) zoneOf(name string) *hosted {
	_, z, _ := x.byName.Deepest(name)
	return z
}

// answer returns the reply to state's query for a name in z, from z's
// current version; a zone not loaded yet gets SERVFAIL.
func (x *EtcdZone) answer(ctx context.Context, state request.Request, z *hosted) *dns.Msg {
	if z.signing != nil {
		return x.signedAnswer(ctx, state, z)
	}
	v := z.current.Load()
	if v == nil {
		return serverFailure(state)
	}
	return v.Answer(ctx, state, x.served)
}

// serverFailure returns the SERVFAIL reply to state's query.
func serverFailure(state request.Request) *dns.Msg {
	m := new(dns.Msg)
	m.SetRcode(state.Req, dns.RcodeServerFailure)
	return m
}

// served reports whether name lies in one of x's zones, outside the
// delegations.
func (x *EtcdZone) served(name string) bool {
	if x.zoneOf(name) == nil {
		return false
	}
	for _, d := range x.corefile.Delegations {
		if dnsname.In(name, d.Name) {
			return false
		}
	}
	return true
}

// chaser is the Upstream of the zones' lookups: where a CNAME leads out of
// the zone's tree, the lookup asks it for the target. A target in one of
// the plugin's zones is looked up at once, in the zone's current version;
// any other is asked of the whole server again (the etcd plugin and the
// file plugin do so too), where the view, if any, makes its answer the
// view's.
type chaser struct{ x *EtcdZone }

// Lookup implements zone.Upstream.
func (c chaser) Lookup(ctx context.Context, state request.Request, name string, qtype uint16) (*dns.Msg, error) {
	if z := c.x.zoneOf(name); z != nil {
		return c.x.answer(ctx, state.NewWithQuestion(name, qtype), z), nil
	}
	return upstream.New().Lookup(ctx, state, name, qtype)
}
