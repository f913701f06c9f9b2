// Package zone is an etcdzone zone without etcd: the index of the records
// of a zone's keys, parsed once (the SkyDNS codec); the versions of the zone
// as a view shows it, each built from the index once per change and never
// changed after, so that queries and transfers read one without a lock; the
// lookups (the file plugin's, with an authoritative server's rules); the
// serial; and the journal of changes that incremental transfers send. Each
// change yields the RRsets it removed and added (Delta), for the journal, or
// a signer.
package zone

import (
	"cmp"
	"maps"
	"slices"

	"github.com/coredns/coredns/plugin/file"
	"github.com/coredns/coredns/plugin/file/tree"
	"github.com/globaladdr/globaladdr/plugin/view"

	"github.com/miekg/dns"
)

// Zone is what the Corefile says about one zone: its name, its apex, and
// the subdomains it delegates.
type Zone struct {
	// Name is the zone's name, lower case and fully qualified.
	Name string
	Apex *Apex
	// Cuts are the names of the subdomains the zone delegates.
	Cuts []string
	// Upstream looks up the targets of CNAME records outside the zone.
	Upstream file.Upstreamer
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
	State *view.State

	z *Zone
	// file's tree and lookup answer the queries (the file plugin's).
	file *file.Zone
	// elems are the nodes of the tree, in the tree's (canonical) order.
	elems []*tree.Elem
	// count is the number of records in the tree.
	count int
	// judged holds, by owner name, the records of the owners whose
	// records the view shows otherwise (rewritten, or left out), as the
	// index has them, ordered by type (Judged).
	judged map[string][]dns.RR
	// signed is the number of records a signer adds to v (see Signed).
	signed int
}

// SOA returns v's SOA record.
func (v *Version) SOA() *dns.SOA { return v.file.SOA }

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
func Build(z *Zone, idx *Index, prev *Version, changed map[string]bool, st *view.State, s Serial) (*Version, Delta) {
	var elems []*tree.Elem
	var judged map[string][]dns.RR
	if prev == nil || changed == nil {
		owners := make([]string, 0, len(idx.owners)+1)
		owners = append(owners, z.Name)
		for owner := range idx.owners {
			if owner != z.Name {
				owners = append(owners, owner)
			}
		}
		elems, judged = z.elems(idx, owners, st)
	} else {
		e, j := z.elems(idx, keys(changed), st)
		elems, judged = merge(prev.elems, e, changed), mergeJudged(prev.judged, j, changed)
	}
	next := &Version{z: z, elems: elems, State: st, judged: judged}
	d := Delta{}
	var before []*tree.Elem
	if prev != nil {
		d.From = prev.SOA()
		before = prev.elems
		next.count = prev.count
	}
	diff(before, elems, &d)
	next.count += len(d.Added) - len(d.Removed)
	if prev != nil && s == prev.Serial && len(d.Removed)+len(d.Added) > 0 {
		s = s.Bumped()
	}
	next.Serial = s
	next.file = file.NewZone(z.Name, "")
	next.file.SOA = z.Apex.SOA(z.Name, s.Value())
	next.file.NS = z.Apex.NSSet(z.Name, z.Apex.NS)
	next.file.Tree = balanced(elems)
	next.file.Upstream = z.Upstream
	d.To = next.file.SOA
	return next, d
}

// elems returns the nodes of owners' records as st shows them (as they are
// when st is nil; none of an owner whose mark st does not show), in
// canonical order; an owner without records has none.
// It also returns, by owner name, the records as the index has them of each
// owner whose records st shows otherwise, ordered by type.
// The apex's node has a copy of the SOA record, never served (the lookup
// answers the apex's SOA from the zone's apex records): the file plugin's
// lookup takes a name without a node in the tree and without names below it
// for one that does not exist, and an empty zone's apex would be NXDOMAIN.
func (z *Zone) elems(idx *Index, owners []string, st *view.State) (out []*tree.Elem, judged map[string][]dns.RR) {
	out = make([]*tree.Elem, 0, len(owners))
	soa := z.Apex.SOA(z.Name, 0)
	for _, owner := range owners {
		rrs := idx.records(owner)
		if st != nil && len(rrs) > 0 {
			var shown []dns.RR
			if st.Shows(owner, idx.mark(owner)) {
				shown = st.Show(rrs)
			}
			if !sameSlice(shown, rrs) {
				if judged == nil {
					judged = map[string][]dns.RR{}
				}
				judged[owner] = slices.SortedStableFunc(slices.Values(rrs), func(a, b dns.RR) int {
					return cmp.Compare(a.Header().Rrtype, b.Header().Rrtype)
				})
			}
			rrs = slices.Clone(shown)
		}
		rrs = srvShares(cut(rrs))
		if owner == z.Name {
			rrs = append(rrs, &dns.SOA{Hdr: dns.RR_Header{Name: z.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: soa.Ns, Mbox: soa.Mbox})
		}
		if len(rrs) > 0 {
			out = append(out, newElem(rrs))
		}
	}
	slices.SortFunc(out, compareElems)
	return out, judged
}

// sameSlice reports whether a and b are the same slice: the view showed the
// records as they are.
func sameSlice(a, b []dns.RR) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Judged returns the records of type qtype (any type for ANY) at name, lower
// case, as the index had them, when the view shows that name's records
// otherwise (rewritten, or left out): for the view to count what it did.
// It allocates nothing: every query of the view asks.
func (v *Version) Judged(name string, qtype uint16) []dns.RR {
	rrs := v.judged[name]
	if qtype == dns.TypeANY {
		return rrs
	}
	i := slices.IndexFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == qtype })
	if i < 0 {
		return nil
	}
	n := 1
	for i+n < len(rrs) && rrs[i+n].Header().Rrtype == qtype {
		n++
	}
	return rrs[i : i+n : i+n]
}

// mergeJudged returns prev, but for the names in changed, whose records
// are those of changes.
func mergeJudged(prev, changes map[string][]dns.RR, changed map[string]bool) map[string][]dns.RR {
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

// diff adds to d what turns the nodes before into those after, both in
// canonical order: the records removed and those added. A node both share
// changed nothing.
func diff(before, after []*tree.Elem, d *Delta) {
	i, j := 0, 0
	for i < len(before) || j < len(after) {
		switch {
		case i < len(before) && j < len(after) && before[i] == after[j]:
			// shared: unchanged, and no names to compare
			i++
			j++
		case j == len(after) || i < len(before) && compareElems(before[i], after[j]) < 0:
			d.Removed = appendRecords(d.Removed, before[i], nil)
			i++
		case i == len(before) || compareElems(before[i], after[j]) > 0:
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

// Records returns what an AXFR of v gets: v's SOA, its NS set, the rest of
// its records in canonical order, and its SOA again.
func (v *Version) Records() []dns.RR {
	rrs := make([]dns.RR, 0, v.count+len(v.file.NS)+2)
	rrs = append(rrs, v.SOA())
	rrs = append(rrs, v.file.NS...)
	for _, e := range v.elems {
		rrs = appendRecords(rrs, e, nil)
	}
	return append(rrs, v.SOA())
}
