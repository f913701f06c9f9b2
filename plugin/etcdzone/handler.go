package etcdzone

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// Ready implements ready.Readiness: the plugin is ready once every zone is
// loaded, and while it has heard from etcd within the SOA's expire.
func (x *EtcdZone) Ready() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.expired() {
		return false
	}
	for _, z := range x.zones {
		if z.Current() == nil {
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
	var z *blockZone
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
func (x *EtcdZone) reply(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, z *blockZone) *dns.Msg {
	state := request.Request{W: w, Req: r}
	m := z.Answer(ctx, state)
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
func (x *EtcdZone) judged(ctx context.Context, q dns.Question, z *blockZone) {
	if x.view == nil {
		return
	}
	if v := z.Current(); v != nil {
		if rrs, at := v.Judged(dns.CanonicalName(q.Name), q.Qtype); len(rrs) > 0 {
			x.view.Judged(ctx, rrs, at)
		}
	}
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
		return z.Answer(ctx, state.NewWithQuestion(name, qtype)), nil
	}
	return upstream.New().Lookup(ctx, state, name, qtype)
}
