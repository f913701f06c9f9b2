package globaladdr

import (
	"context"

	"github.com/coredns/coredns/plugin"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// The plugin is the external view of its server block for a backend that
// holds its zones in memory (etcdzone): the backend builds each zone as the
// view shows it, and the plugin passes the answers of those zones through.
var _ horizon.View = (*GlobalAddr)(nil)

// Current implements horizon.View: the external view at the global addresses
// in use; nil while a from source has not delivered any. Without from
// sources and global addresses (map alone), an internal address that no map
// covers has nothing to become, and goes.
func (g *GlobalAddr) Current() *horizon.State { return g.state.Load() }

// Serve implements horizon.View: the plugin passes the answers for names in
// zones down the chain and up again untouched, hidden names included (the
// backend's zones hold none of them).
func (g *GlobalAddr) Serve(zones []string) (undo func()) {
	set := dnsname.Set(zones)
	g.served.Store(&set)
	return func() { g.served.CompareAndSwap(&set, nil) }
}

// Judged implements horizon.View: it counts what the view did to rrs, the
// records of a question's name and type as the backend holds them, at at,
// as the rewrite counts what it does to an answer: rewritten, dropped,
// hidden, ownership records, tunnelled, unrouted. The backend's zone already
// showed them so; this only judges them, allocating no records, as it runs
// after every answer.
func (g *GlobalAddr) Judged(ctx context.Context, rrs []dns.RR, at horizon.Place) {
	addrs := g.addrs.Load()
	if !addrs.Known() {
		return
	}
	var t outside.Tally
	g.policy.CountOwner(rrs, addrs, at, &t)
	report(ctx, &t)
}

// Fallthrough implements horizon.View: a question of a zone a backend serves
// (Serve) that the backend leaves to the plugins after it, next, is judged
// as those of the block's other backends are: a hidden name is answered
// NXDOMAIN with the SOA of the backend's zone (asked at its apex: the name
// itself would be left to next again), as is every name with expose marked
// (next's records have no mark), and next's answer is rewritten. The
// question was counted when it passed. A sub-query of the view's own goes
// to next as it is: the view judges its reply.
func (g *GlobalAddr) Fallthrough(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, next plugin.Handler) (int, error) {
	if ctx.Value(subQueryKey{}) != nil {
		return plugin.NextOrFailure(g.Name(), next, ctx, w, r)
	}
	name := questionName(r)
	hidden := len(r.Question) == 1 && (g.policy.Hidden(name) || g.unexposed(name))
	return g.judge(ctx, w, r, next, hidden, g.servedZone(name))
}

// passes reports whether r, a query or an UPDATE, asks for a name in a
// zone a backend serves as the view shows it (Serve): any other opcode (a
// NOTIFY) is judged as the other backends' answers are, whatever the
// backend does with it.
func (g *GlobalAddr) passes(r *dns.Msg) bool {
	return len(r.Question) == 1 && (r.Opcode == dns.OpcodeQuery || r.Opcode == dns.OpcodeUpdate) && g.servedZone(r.Question[0].Name) != ""
}

// servedZone returns the zone of name that a backend serves as the view
// shows it (Serve), lower case; "" when there is none. It looks at each of
// the name's suffixes once, allocating nothing unless the name has
// upper-case letters.
func (g *GlobalAddr) servedZone(name string) string {
	set := g.served.Load()
	if set == nil {
		return ""
	}
	if zone, _, ok := set.Deepest(name); ok {
		return zone
	}
	return ""
}

// Tunnel returns the host name, fully qualified, that the view's names with
// an internal address stand for as CNAMEs (the tunnel property); "" for
// none: for publish, which gives their endpoints the provider's properties.
func (g *GlobalAddr) Tunnel() string { return g.policy.Tunnel() }
