// Package globaladdr implements a plugin that serves the external view of a
// split-horizon zone: it replaces the internal addresses in every answer of
// its server block with the global address, and hides what the outside must
// not see. The rewrite reads neither etcd nor files (its global addresses
// come from the Corefile or from package source), and never changes a
// message or a record it is handed.
package globaladdr

import (
	"context"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/pkg/nonwriter"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin(pluginName)

// GlobalAddr is the globaladdr handler of one server block.
type GlobalAddr struct {
	Next plugin.Handler

	policy *outside.Policy
	// addrs holds the current state of the global addresses and of the
	// maps' targets, which an answer is rewritten with from start to end;
	// its global addresses are not known until a from source gives them.
	addrs atomic.Pointer[outside.Globals]
	// state is the view at addrs (Current); nil until its global addresses
	// are known.
	state atomic.Pointer[horizon.State]
	// sources keeps addrs up to date from the from sources and the maps'
	// sources; nil when the Corefile gives the addresses and the maps.
	sources *source.Set
	// served holds the zones a backend answers as the view shows them
	// (Serve); nil while none does.
	served atomic.Pointer[dnsname.Zones[bool]]
	// etcdMarks are the marks of the etcd plugin's tree, in a block whose
	// etcd plugin answers without etcdzone; nil in any other. Set by start,
	// before the block serves (the ready plugin may ask Ready before).
	etcdMarks atomic.Pointer[etcdMarks]
	// unmarked is the error start returns, naming expose marked where the
	// Corefile gives it, when no backend of the block marks its names;
	// nil without expose marked.
	unmarked error
	// tunnel is the tunnel property, for start's checks; zero without one.
	tunnel tunnel
	// where is where the Corefile gives the directive, for start's checks.
	where string
}

// Name implements plugin.Handler.
func (g *GlobalAddr) Name() string { return pluginName }

// Ready implements ready.Readiness: the plugin is ready once it knows its
// global addresses and, behind the etcd plugin, the marks of its tree.
func (g *GlobalAddr) Ready() bool {
	em := g.etcdMarks.Load()
	return g.addrs.Load().Known() && (em == nil || em.marks.Loaded())
}

// Settled reports whether the view knows all it shows the zones at: it is
// ready, and every map whose prefix a source learns has one (a map without
// drops what it covers). publish writes nothing before: a view that does
// not know a prefix yet would delete its records at the provider.
func (g *GlobalAddr) Settled() bool { return g.Ready() && g.addrs.Load().MapsKnown() }

// ServeDNS implements plugin.Handler. A question for a zone that a backend
// answers as the view shows it (Serve) goes down the chain, and its reply
// up, untouched (a query for a hidden name counts: the backend's zone
// answers it as a name it does not hold), unless the backend leaves it to
// the plugins after it (Fallthrough). Every other question is judged; with
// expose marked, it is hidden (no other backend marks its records).
func (g *GlobalAddr) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if g.passes(r) {
		g.countHidden(ctx, r)
		return plugin.NextOrFailure(g.Name(), g.Next, ctx, w, r)
	}
	return g.serveJudged(ctx, w, r)
}

// countHidden counts r's question as one for a hidden name, if it is: the
// plugin that serves it as the view shows it answers NXDOMAIN. It is kept
// out of ServeDNS, whose frame every reply of that plugin is written above
// (see etcdzone's reply).
//
//go:noinline
func (g *GlobalAddr) countHidden(ctx context.Context, r *dns.Msg) {
	if g.policy.Hidden(r.Question[0].Name) {
		report(ctx, &outside.Tally{Hidden: 1})
	}
}

// serveJudged serves r, a query for no zone a backend serves as the view
// shows it: a hidden name (or one expose leaves out) is NXDOMAIN, anything
// else is judged on its way up.
func (g *GlobalAddr) serveJudged(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	hidden := len(r.Question) == 1 && (g.policy.Hidden(r.Question[0].Name) || g.unexposed(r.Question[0].Name))
	if hidden {
		report(ctx, &outside.Tally{Hidden: 1})
	}
	return g.judge(ctx, w, r, g.Next, hidden, questionName(r))
}

// judge serves r through next as the view serves its backends' answers: a
// hidden name is answered NXDOMAIN at once, with the SOA the plugins below
// give for the name soaName; everything else goes down to next, and its
// reply is rewritten on its way up, at the global addresses in use when r
// came (each envelope of a transfer too).
func (g *GlobalAddr) judge(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, next plugin.Handler, hidden bool, soaName string) (int, error) {
	if hidden {
		return g.hiddenName(ctx, w, r, soaName)
	}
	rw := &ResponseWriter{ResponseWriter: w, g: g, addrs: g.addrs.Load(), ctx: ctx, req: r}
	rcode, err := plugin.NextOrFailure(g.Name(), next, ctx, rw, r)
	if rw.given > 0 {
		// The transfer plugin's own log line counts the records it was
		// given, before the rewrite.
		log.Infof("transfer of %s to %s: %d records sent of the %d given", questionName(r), w.RemoteAddr(), rw.sent, rw.given)
	}
	return rcode, err
}

// hiddenName answers NXDOMAIN for a hidden name, with the SOA the plugins
// below give for soaName.
func (g *GlobalAddr) hiddenName(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, soaName string) (int, error) {
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeNameError)
	m.Authoritative = true
	if soa := g.soa(ctx, w, r, soaName); soa != nil {
		m.Ns = []dns.RR{soa}
	}
	log.Debugf("%s is hidden: NXDOMAIN", r.Question[0].Name)
	w.WriteMsg(m)
	return dns.RcodeNameError, nil
}

// soa asks the plugins below for the SOA record of the zone name is in. It
// returns nil when they give none.
func (g *GlobalAddr) soa(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, name string) dns.RR {
	q := r.Copy()
	q.Question[0].Name, q.Question[0].Qtype = name, dns.TypeSOA
	nw := subQuery{nonwriter.New(w)}
	ctx = context.WithValue(ctx, subQueryKey{}, true)
	if _, err := plugin.NextOrFailure(g.Name(), g.Next, ctx, nw, q); err != nil || nw.Msg == nil {
		return nil
	}
	for _, section := range [][]dns.RR{nw.Msg.Answer, nw.Msg.Ns} {
		for _, rr := range section {
			// Judged as every record is: neither its owner nor its MNAME
			// or RNAME may be hidden.
			if soa, ok := rr.(*dns.SOA); ok && g.policy.Keeps(soa) {
				return soa
			}
		}
	}
	return nil
}

// subQueryKey marks the context of a sub-query of the view's own (soa),
// whose reply it judges itself: a backend's Fallthrough passes it on as it
// is.
type subQueryKey struct{}

// subQuery keeps the reply to a sub-query instead of sending it, whether the
// plugins below write it as a message or as bytes: nothing of it may reach
// the client unrewritten.
type subQuery struct{ *nonwriter.Writer }

// Write implements dns.ResponseWriter.
func (s subQuery) Write(buf []byte) (int, error) {
	m := new(dns.Msg)
	if err := m.Unpack(buf); err != nil {
		return 0, err
	}
	s.Msg = m
	return len(buf), nil
}
