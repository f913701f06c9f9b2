package zone

import (
	"iter"
	"slices"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// Index holds the records of one zone's etcd keys (and of the Corefile's
// lines), by their owner name. Each key's records are parsed once, into a
// Source that the indexes of every zone and view holding the key share:
// each change of one key changes the records of that key alone, and each
// view's zone is built from the index (see Build). It is not safe for
// concurrent use: the goroutine that follows the zone changes and reads it.
type Index struct {
	// owners holds the first source of the records at each owner name,
	// and more the others, of the names that several sources hold: most
	// names have one, which takes no slice of its own.
	owners map[string]*Source
	more   map[string][]*Source
}

// NewIndex returns an index with the records of fixed, by their source's
// name (the Corefile's records: delegations and glue, which the operator
// exposes by writing them).
func NewIndex(fixed map[string][]dns.RR) *Index {
	idx := &Index{owners: map[string]*Source{}, more: map[string][]*Source{}}
	for name, rrs := range fixed {
		idx.Put(nil, &Source{Key: name, Owner: rrs[0].Header().Name, RRs: rrs, Mark: horizon.Exposed, Fixed: true}, nil)
	}
	return idx
}

// Source is what one source holds: an etcd key's records (or a Corefile
// line's: Fixed), at their owner name, and how they are marked and routed
// for the external view. A Corefile line's records take no part in their
// name's route: glue beside an etcd key routed "tunnel" does not withhold
// the name.
type Source struct {
	Key, Owner string
	RRs        []dns.RR
	Mark       horizon.Mark
	Route      horizon.Route
	Fixed      bool
}

// Put replaces the source old by next: either may be nil (none), and old
// may be a source the index does not hold (one its zone did not accept). It
// adds the owner names whose records changed to changed (when not nil).
func (idx *Index) Put(old, next *Source, changed map[string]bool) {
	if old != nil && idx.remove(old) && changed != nil {
		changed[old.Owner] = true
	}
	if next != nil && len(next.RRs) > 0 {
		if idx.owners[next.Owner] == nil {
			idx.owners[next.Owner] = next
		} else {
			idx.more[next.Owner] = append(idx.more[next.Owner], next)
		}
		if changed != nil {
			changed[next.Owner] = true
		}
	}
}

// remove removes s, and reports whether idx held it. The sources left at
// its owner name keep their order.
func (idx *Index) remove(s *Source) bool {
	more := idx.more[s.Owner]
	if idx.owners[s.Owner] == s {
		if len(more) == 0 {
			delete(idx.owners, s.Owner)
			return true
		}
		idx.owners[s.Owner], more = more[0], more[1:]
	} else if i := slices.Index(more, s); i >= 0 {
		more = slices.Delete(more, i, i+1)
	} else {
		return false
	}
	if len(more) == 0 {
		delete(idx.more, s.Owner)
	} else {
		idx.more[s.Owner] = more
	}
	return true
}

// ownerNames returns the owner names of idx's records, and apex first,
// whether it has records or not.
func (idx *Index) ownerNames(apex string) []string {
	names := make([]string, 0, len(idx.owners)+1)
	names = append(names, apex)
	for owner := range idx.owners {
		if owner != apex {
			names = append(names, owner)
		}
	}
	return names
}

// Len returns the number of sources idx holds.
func (idx *Index) Len() int {
	n := len(idx.owners)
	for _, more := range idx.more {
		n += len(more)
	}
	return n
}

// sources returns the sources of owner's records, in the order they came.
func (idx *Index) sources(owner string) iter.Seq[*Source] {
	return func(yield func(*Source) bool) {
		first := idx.owners[owner]
		if first == nil || !yield(first) {
			return
		}
		for _, s := range idx.more[owner] {
			if !yield(s) {
				return
			}
		}
	}
}

// mark returns the mark of owner's records: horizon.Join of its sources'.
func (idx *Index) mark(owner string) horizon.Mark {
	return joined(idx, owner, func(s *Source) (horizon.Mark, bool) { return s.Mark, true }, horizon.Join)
}

// route returns the route of owner's records: horizon.JoinRoutes of its
// etcd keys' (a Corefile line has none).
func (idx *Index) route(owner string) horizon.Route {
	return joined(idx, owner, func(s *Source) (horizon.Route, bool) { return s.Route, !s.Fixed }, horizon.JoinRoutes)
}

// joined returns what of gives of owner's sources, those it takes (ok),
// joined by join; the zero value when it takes none.
func joined[T any](idx *Index, owner string, of func(*Source) (T, bool), join func(T, T) T) T {
	var v T
	first := true
	for s := range idx.sources(owner) {
		w, ok := of(s)
		switch {
		case !ok:
		case first:
			v, first = w, false
		default:
			v = join(v, w)
		}
	}
	return v
}

// records returns the records of owner's sources, each once (two keys with
// the same record make one), in a slice of their own.
func (idx *Index) records(owner string) []dns.RR {
	var rrs []dns.RR
	for s := range idx.sources(owner) {
		for _, rr := range s.RRs {
			if !slices.ContainsFunc(rrs, func(o dns.RR) bool { return dns.IsDuplicate(o, rr) }) {
				rrs = append(rrs, rr)
			}
		}
	}
	return rrs
}
