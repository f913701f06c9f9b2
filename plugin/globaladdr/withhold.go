package globaladdr

import (
	"context"

	"github.com/coredns/coredns/plugin"

	"github.com/miekg/dns"
)

// Withholds reports whether the external view never shows rr, whatever the
// question: it names a hidden name, it is an ownership record, it holds an
// internal address that can't be rewritten, or an internal address of a
// family without a global address (once the global addresses are known:
// until then the view answers SERVFAIL instead). A backend that holds a
// zone in memory leaves such records out of the zone it serves in this
// block, so that the view's answers agree with its transfer: a name whose
// records are all withheld does not exist, and a wildcard covers it. What
// it says of address records may change with the global addresses
// (Subscribe).
func (g *GlobalAddr) Withholds(rr dns.RR) bool {
	switch g.policy.judge(rr) {
	case keep, rewriteHints:
		return false
	case rewriteAddr:
		return g.noGlobalFor(rr)
	}
	return true
}

// noGlobalFor reports whether rr, an A or AAAA record with an internal
// address, has nothing to become: no map covers it, and the global
// addresses, once known, hold none of its family.
func (g *GlobalAddr) noGlobalFor(rr dns.RR) bool {
	ip, v4, _ := address(rr)
	a, _ := addrOf(ip, v4)
	globals := g.addrs.Load()
	return g.policy.lookupMap(a) == nil && globals != nil && len(globals.family(a)) == 0
}

// Withhold tells g that the plugin below it answers zones from a zone that
// holds no record Withholds names. g then lets it answer the hidden names of
// those zones itself, as names that are not there: NXDOMAIN, NODATA above a
// record that is shown (an ACME challenge), or what a wildcard above them
// gives, so that they answer as a secondary holding the transfer does; and
// it keeps the records the plugin gives for the question's own name, which
// are a wildcard's. undo ends it.
func (g *GlobalAddr) Withhold(zones []string) (undo func()) {
	g.withheld.Store(&zones)
	return func() { g.withheld.CompareAndSwap(&zones, nil) }
}

// withholds reports whether name lies in a zone whose backend withholds.
func (g *GlobalAddr) withholds(name string) bool {
	zones := g.withheld.Load()
	return zones != nil && plugin.Zones(*zones).Matches(name) != ""
}

// Withheld counts rrs, records of a question's name and type that the plugin
// below left out of its answer because Withholds names them, as the rewrite
// counts what it drops from an answer: a hidden name's records, ownership
// records, internal addresses without a global address of their family.
func (g *GlobalAddr) Withheld(ctx context.Context, rrs []dns.RR) {
	var t tally
	for _, rr := range rrs {
		switch g.policy.judge(rr) {
		case dropHidden:
			t.hidden++
		case dropRegistry:
			t.droppedTXT++
		case keep, rewriteHints:
		default:
			t.dropped(rr.Header().Rrtype, 1)
		}
	}
	t.report(ctx)
}
