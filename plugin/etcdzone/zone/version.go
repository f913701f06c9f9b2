// Package zone is an etcdzone zone without etcd: the index of the records
// of a zone's keys, parsed once (the SkyDNS codec); the versions of the zone
// as a view shows it, each built from the index once per change and never
// changed after, so that queries and transfers read one without a lock: its
// nodes (a name's records, by type) in canonical order for transfers, and
// by name for queries; the lookup over them (RFC 1034's, with an
// authoritative server's rules); the serial; and the journal of changes
// that incremental transfers send. Each change yields the RRsets it removed
// and added (Delta), for the journal, or a signer.
package zone

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// Zone is what the Corefile says about one zone: its name, its apex, the
// subdomains it delegates and the names of their name servers.
type Zone struct {
	// Name is the zone's name, lower case and fully qualified.
	Name string
	Apex *Apex
	// Cuts are the names of the subdomains the zone delegates.
	Cuts []string
	// Hosts are the names of the name servers of the apex and of the
	// delegations, which can't be aliases (RFC 2181 section 10.3).
	Hosts []string
	// Upstream looks up the targets of CNAME records outside the zone.
	Upstream Upstream
}

// Upstream looks up the name of a CNAME's target that the zone does not
// hold, as the file plugin's Upstreamer does.
type Upstream interface {
	Lookup(ctx context.Context, state request.Request, name string, qtype uint16) (*dns.Msg, error)
}

// Version is one state of a zone as a view shows it, built from the zone's
// index off the query path and then published whole: it is never changed
// once built, so that queries and transfers read it without a lock while
// the next one is built.
type Version struct {
	// Serial is the version's serial, that of its SOA record.
	Serial Serial
	// State is the view's state the records were judged at; nil without
	// a view.
	State *horizon.State

	z *Zone
	// soaSet holds the SOA record alone (the Authority section of a
	// negative answer); ns is the apex's NS set.
	soaSet []dns.RR
	ns     []dns.RR
	// nodes are the names with records (and the apex), in canonical
	// order; names has them by name, for queries; cuts are those of the
	// delegations, nearest the apex first.
	nodes []*node
	names names
	cuts  []*node
	// count is the number of records of the nodes.
	count int
	// withheld holds, by owner name, the records of the owners the view
	// shows none of, as the index has them, ordered by type (Judged);
	// routes the routes of the owners not routed as the view routes every
	// name (horizon.ViewRoute), few.
	withheld map[string][]dns.RR
	routes   map[string]horizon.Route
	// signed is the number of records a signer adds to v (see Signed).
	signed int
}

// SOA returns v's SOA record.
func (v *Version) SOA() *dns.SOA { return v.soaSet[0].(*dns.SOA) }

// Count returns the number of records of v, the apex's SOA and NS records
// aside.
func (v *Version) Count() int { return v.count }

// Delta is what one version changes: the records it removes and those it
// adds, from the SOA of the version before to its own (RFC 1995). It holds
// the RRsets that changed, for a journal, or a signer.
type Delta struct {
	From, To       *dns.SOA
	Removed, Added []dns.RR
}

// Build returns the version of z that follows prev (nil: none yet) at
// serial s, or the serial after it when the records changed but s did not
// move, and at the view's state st: the records of the owner names changed
// are built again from idx (all of them when changed is nil), the others'
// are prev's. It also returns what changed since prev.
func Build(z *Zone, idx *Index, prev *Version, changed map[string]bool, st *horizon.State, s Serial) (*Version, Delta) {
	next := &Version{z: z, State: st}
	if prev == nil || changed == nil {
		next.nodes, next.withheld, next.routes = z.nodes(idx, idx.ownerNames(z.Name), st)
		next.names = indexNames(z.Name, next.nodes)
		next.cuts = cuts(z.Name, next.nodes)
	} else {
		nodes, withheld, routes := z.nodes(idx, keys(changed), st)
		next.nodes = merge(prev.nodes, nodes, changed)
		next.withheld = mergeNames(prev.withheld, withheld, changed)
		next.routes = mergeNames(prev.routes, routes, changed)
		next.names = prev.names.update(z.Name, next.nodes, changed)
		kept := slices.DeleteFunc(slices.Clone(prev.cuts), func(n *node) bool { return changed[n.name] })
		next.cuts = cuts(z.Name, slices.Concat(kept, nodes))
	}
	d := Delta{}
	var before []*node
	if prev != nil {
		d.From = prev.SOA()
		before = prev.nodes
		next.count = prev.count
	}
	diff(before, next.nodes, &d)
	next.count += len(d.Added) - len(d.Removed)
	if prev != nil && s == prev.Serial && len(d.Removed)+len(d.Added) > 0 {
		s = s.Bumped()
	}
	next.Serial = s
	next.soaSet = []dns.RR{z.Apex.SOA(z.Name, s.Value())}
	next.ns = z.Apex.NSSet(z.Name, z.Apex.NS)
	d.To = next.SOA()
	return next, d
}

// nodes returns the nodes of owners' records as st shows them (as they are
// when st is nil; none of an owner whose mark st does not show), in
// canonical order; an owner without records shown has none, but the apex,
// which always exists.
// It also returns, by owner name, the records as the index has them of each
// owner with records none of which st shows, ordered by type, and the
// routes of the owners not routed as the view routes every name.
func (z *Zone) nodes(idx *Index, owners []string, st *horizon.State) (out []*node, withheld map[string][]dns.RR, routes map[string]horizon.Route) {
	out = make([]*node, 0, len(owners))
	for _, owner := range owners {
		rrs := idx.records(owner) // in a slice of their own
		var judged []dns.RR
		if st != nil && len(rrs) > 0 {
			var shown []dns.RR
			at := horizon.Place{Alias: z.mayAlias(owner), Route: idx.route(owner)}
			if at.Route != horizon.ViewRoute {
				if routes == nil {
					routes = map[string]horizon.Route{}
				}
				routes[owner] = at.Route
			}
			if st.Shows(owner, idx.mark(owner)) {
				shown = st.ShowOwner(rrs, at)
			}
			if !sameSlice(shown, rrs) {
				judged, rrs = rrs, shown
			}
		}
		rrs = srvShares(cut(rrs))
		switch {
		case len(rrs) > 0 || owner == z.Name:
			out = append(out, newNode(owner, rrs, judged))
		case len(judged) > 0:
			if withheld == nil {
				withheld = map[string][]dns.RR{}
			}
			slices.SortStableFunc(judged, byType)
			withheld[owner] = judged
		}
	}
	slices.SortFunc(out, compareNodes)
	return out, withheld, routes
}

// mayAlias reports whether owner, a name of z, may be an alias (a CNAME's
// owner): not z's apex, a name server's name, or a name at or below one of
// z's delegations.
func (z *Zone) mayAlias(owner string) bool {
	if owner == z.Name || slices.Contains(z.Hosts, owner) {
		return false
	}
	return !slices.ContainsFunc(z.Cuts, func(cut string) bool { return dnsname.In(owner, cut) })
}

// cuts returns the nodes of nodes that hold NS records, the apex's aside:
// the delegations, nearest the apex first.
func cuts(apex string, nodes []*node) []*node {
	var out []*node
	for _, n := range nodes {
		if n.name != apex && len(n.typ(dns.TypeNS)) > 0 {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b *node) int {
		return cmp.Compare(dns.CountLabel(a.name), dns.CountLabel(b.name))
	})
	return out
}

// sameSlice reports whether a and b are the same slice: the view showed the
// records as they are.
func sameSlice(a, b []dns.RR) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Judged returns the records of type qtype (any type for ANY) at name, lower
// case, as the index had them, when the view shows that name's records
// otherwise (rewritten, or left out), and the name's place (a name that
// holds a CNAME or NS records of its own is no alias the view made): for
// the view to count what it did. It allocates nothing for a name without
// escapes: every query of the view asks.
func (v *Version) Judged(name string, qtype uint16) ([]dns.RR, horizon.Place) {
	name = plain(name)
	var all []dns.RR
	if n := v.names.byName[name]; n != nil {
		all = n.judged()
	} else {
		all = v.withheld[name]
	}
	rrs := all
	if qtype != dns.TypeANY {
		rrs = rrsOfType(all, qtype)
	}
	if len(rrs) == 0 {
		return nil, horizon.Place{}
	}
	own := slices.ContainsFunc(all, func(rr dns.RR) bool { t := rr.Header().Rrtype; return t == dns.TypeCNAME || t == dns.TypeNS })
	return rrs, horizon.Place{Alias: v.z.mayAlias(name) && !own, Route: v.routes[name]}
}

// mergeNames returns prev, but for the names in changed, whose values are
// those of changes.
func mergeNames[V any](prev, changes map[string]V, changed map[string]bool) map[string]V {
	if len(prev) == 0 {
		return changes
	}
	out := maps.Clone(prev)
	for name := range changed {
		delete(out, name)
	}
	maps.Copy(out, changes)
	return out
}

// cut keeps rrs, the records at one name, a set that secondaries load: a
// CNAME record takes the place of the name's other records (which no query
// reaches), and a delegation's NS records that of a CNAME at the cut. (The
// SRV records' weights are then made shares of their priority's:
// srvShares.)
func cut(rrs []dns.RR) []dns.RR {
	has := func(t uint16) bool {
		return slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == t })
	}
	switch {
	case has(dns.TypeNS):
		return slices.DeleteFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeCNAME })
	case has(dns.TypeCNAME):
		return slices.DeleteFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype != dns.TypeCNAME })
	}
	return rrs
}

// keys returns the names of set.
func keys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	return out
}

// merge returns the nodes of prev, but those named in changed, merged with
// changes, the new nodes of the names in changed; all in canonical order.
// It copies the runs of prev between two changed names whole.
func merge(prev, changes []*node, changed map[string]bool) []*node {
	names := slices.SortedFunc(maps.Keys(changed), compareNames)
	out := make([]*node, 0, len(prev)+len(changes))
	i, j := 0, 0
	for _, name := range names {
		at, found := slices.BinarySearchFunc(prev[i:], name, compareNodeName)
		out = append(out, prev[i:i+at]...)
		i += at
		if found {
			i++
		}
		if j < len(changes) && changes[j].name == name {
			out = append(out, changes[j])
			j++
		}
	}
	return append(out, prev[i:]...)
}

// diff adds to d what turns the nodes before into those after, both in
// canonical order: the records removed and those added. A node both share
// changed nothing.
func diff(before, after []*node, d *Delta) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case i < len(before) && j < len(after) && before[i] == after[j]:
			// shared: unchanged, and no names to compare
			i++
			j++
		case j == len(after) || i < len(before) && compareNodes(before[i], after[j]) < 0:
			d.Removed = appendRecords(d.Removed, before[i], nil)
			i++
		case i == len(before) || compareNodes(before[i], after[j]) > 0:
			d.Added = appendRecords(d.Added, after[j], nil)
			j++
		default:
			d.Removed = appendRecords(d.Removed, before[i], after[j])
			d.Added = appendRecords(d.Added, after[j], before[i])
			i++
			j++
		}
	}
}

// appendRecords appends to rrs the records of n that other (nil: none)
// lacks, TTL included, by type.
func appendRecords(rrs []dns.RR, n, other *node) []dns.RR {
	for _, rr := range n.records() {
		if other == nil || !slices.ContainsFunc(other.typ(rr.Header().Rrtype), func(o dns.RR) bool {
			return o.Header().Ttl == rr.Header().Ttl && dns.IsDuplicate(o, rr)
		}) {
			rrs = append(rrs, rr)
		}
	}
	return rrs
}

// Records returns what an AXFR of v gets: v's SOA, its NS set, the rest of
// its records in canonical order, and its SOA again.
func (v *Version) Records() []dns.RR {
	rrs := make([]dns.RR, 0, v.count+len(v.ns)+2)
	rrs = append(rrs, v.SOA())
	rrs = append(rrs, v.ns...)
	for _, n := range v.nodes {
		rrs = appendRecords(rrs, n, nil)
	}
	return append(rrs, v.SOA())
}
