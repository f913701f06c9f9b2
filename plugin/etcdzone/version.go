package etcdzone

import (
	"slices"

	"github.com/coredns/coredns/plugin/file"
	"github.com/coredns/coredns/plugin/file/tree"
	"github.com/globaladdr/globaladdr/plugin/view"

	"github.com/miekg/dns"
)

// version is one state of a zone as its view shows it, built from the
// zone's index off the query path and then published whole (zone.current):
// it is never changed once published, so that queries and transfers read
// it without a lock while the next one is built.
type version struct {
	// zone's tree and lookup answer the queries (the file plugin's).
	zone *file.Zone
	// elems are the nodes of zone's tree, in the tree's (canonical) order.
	elems []*tree.Elem
	// count is the number of records in the tree.
	count  int
	serial serial
	// state is the view's state the records were judged at; nil for a
	// block without a view.
	state *view.State
}

// delta is what one new version changes: the records it removes and those
// it adds, RRset by RRset, from the SOA of the version before to its own.
// The journal keeps it for incremental transfers.
type delta struct {
	from, to       *dns.SOA
	removed, added []dns.RR
}

// build returns the version of z that follows prev (nil: none yet) at
// serial s and the view's state st: the records of the owner names changed
// are built again from idx (all of them when changed is nil), the others'
// are prev's. It also returns what changed since prev.
func (x *EtcdZone) build(z *zone, idx *index, prev *version, changed map[string]bool, st *view.State, s serial) (*version, delta) {
	var elems []*tree.Elem
	if prev == nil || changed == nil {
		owners := make([]string, 0, len(idx.owners)+1)
		owners = append(owners, z.name)
		for owner := range idx.owners {
			if owner != z.name {
				owners = append(owners, owner)
			}
		}
		elems = x.elems(z, idx, owners, st)
	} else {
		elems = merge(prev.elems, x.elems(z, idx, keys(changed), st), changed)
	}
	zf := file.NewZone(z.name, "")
	zf.SOA = x.apex.soa(z.name, s.value())
	zf.NS = x.apex.nsSet(z.name, x.apex.ns)
	zf.Tree = balanced(elems)
	zf.Upstream = chaser{x}
	next := &version{zone: zf, elems: elems, serial: s, state: st}
	c := delta{to: zf.SOA}
	var before []*tree.Elem
	if prev != nil {
		c.from = prev.zone.SOA
		before = prev.elems
		next.count = prev.count
	}
	diff(before, elems, &c)
	next.count += len(c.added) - len(c.removed)
	return next, c
}

// elems returns the nodes of owners' records as st shows them (as they are
// when st is nil), in canonical order; an owner without records has none.
// The apex's node has a copy of the SOA record, never served (the lookup
// answers the apex's SOA from the zone's apex records): the file plugin's
// lookup takes a name without a node in the tree and without names below it
// for one that does not exist, and an empty zone's apex would be NXDOMAIN.
func (x *EtcdZone) elems(z *zone, idx *index, owners []string, st *view.State) []*tree.Elem {
	out := make([]*tree.Elem, 0, len(owners))
	soa := x.apex.soa(z.name, 0)
	for _, owner := range owners {
		rrs := idx.records(owner)
		if st != nil && len(rrs) > 0 {
			rrs = slices.Clone(st.Show(rrs))
		}
		rrs = cut(rrs)
		if owner == z.name {
			rrs = append(rrs, &dns.SOA{Hdr: dns.RR_Header{Name: z.name, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: soa.Ns, Mbox: soa.Mbox})
		}
		if len(rrs) > 0 {
			out = append(out, newElem(rrs))
		}
	}
	slices.SortFunc(out, compareElems)
	return out
}

// cut keeps rrs, the records at one name, a set that secondaries load: a
// CNAME record takes the place of the name's other records (which no query
// reaches), and a delegation's NS records that of a CNAME at the cut.
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

// newElem returns the tree node of rrs, records of one owner name. The
// records are made with their names in lower case, as the file plugin's
// Zone.Insert would make them: inserted into the tree as they are, they are
// never written to again.
func newElem(rrs []dns.RR) *tree.Elem {
	var t tree.Tree // the tree package makes its nodes' elements alone
	for _, rr := range rrs {
		t.Insert(rr)
	}
	return t.Root.Elem
}

// compareElems orders nodes by their names, in the tree's order.
func compareElems(a, b *tree.Elem) int { return tree.Less(b, a.Name()) }

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
func merge(prev, changes []*tree.Elem, changed map[string]bool) []*tree.Elem {
	out := make([]*tree.Elem, 0, len(prev)+len(changes))
	i := 0
	for _, e := range prev {
		if changed[e.Name()] {
			continue
		}
		for i < len(changes) && compareElems(changes[i], e) < 0 {
			out = append(out, changes[i])
			i++
		}
		out = append(out, e)
	}
	return append(out, changes[i:]...)
}

// balanced returns a tree of elems, in canonical order, of the least depth.
// No node is inserted or deleted afterwards, so its colours do not matter.
func balanced(elems []*tree.Elem) *tree.Tree {
	nodes := make([]tree.Node, len(elems))
	var build func(lo, hi int) *tree.Node
	build = func(lo, hi int) *tree.Node {
		if lo >= hi {
			return nil
		}
		mid := (lo + hi) / 2
		n := &nodes[mid]
		n.Elem, n.Left, n.Right = elems[mid], build(lo, mid), build(mid+1, hi)
		return n
	}
	return &tree.Tree{Root: build(0, len(elems)), Count: len(elems)}
}

// diff adds to c what turns the nodes before into those after, both in
// canonical order: the records removed and those added. A node both share
// changed nothing.
func diff(before, after []*tree.Elem, c *delta) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case i < len(before) && j < len(after) && before[i] == after[j]:
			// shared: unchanged, and no names to compare
			i++
			j++
		case j == len(after) || i < len(before) && compareElems(before[i], after[j]) < 0:
			c.removed = appendRecords(c.removed, before[i], nil)
			i++
		case i == len(before) || compareElems(before[i], after[j]) > 0:
			c.added = appendRecords(c.added, after[j], nil)
			j++
		default:
			c.removed = appendRecords(c.removed, before[i], after[j])
			c.added = appendRecords(c.added, after[j], before[i])
			i++
			j++
		}
	}
}

// appendRecords appends to rrs the records of e that other (nil: none)
// lacks, TTL included, by type, but the apex's SOA copy.
func appendRecords(rrs []dns.RR, e, other *tree.Elem) []dns.RR {
	types := e.Types()
	slices.Sort(types)
	for _, t := range types {
		if t == dns.TypeSOA {
			continue
		}
		for _, rr := range e.Type(t) {
			if other == nil || !slices.ContainsFunc(other.Type(t), func(o dns.RR) bool {
				return o.Header().Ttl == rr.Header().Ttl && dns.IsDuplicate(o, rr)
			}) {
				rrs = append(rrs, rr)
			}
		}
	}
	return rrs
}
