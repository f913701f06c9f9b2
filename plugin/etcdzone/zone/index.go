package zone

import (
	"slices"

	"github.com/globaladdr/globaladdr/plugin/view"

	"github.com/miekg/dns"
)

// Index holds the records of one zone's etcd keys (and of the Corefile's
// lines), by their owner name. Each key's records are parsed once, into a
// Source that the indexes of every zone and view holding the key share:
// each change of one key changes the records of that key alone, and each
// view's zone is built from the index (see Build). It is not safe for
// concurrent use: the goroutine that follows the zone changes and reads it.
type Index struct {
	// owners holds the sources of the records at each owner name.
	owners map[string][]*Source
}

// NewIndex returns an index with the records of fixed, by their source's
// name (the Corefile's records: delegations and glue, which the operator
// exposes by writing them).
func NewIndex(fixed map[string][]dns.RR) *Index {
	idx := &Index{owners: map[string][]*Source{}}
	for name, rrs := range fixed {
		idx.Put(nil, &Source{Key: name, Owner: rrs[0].Header().Name, RRs: rrs, Mark: view.Exposed}, nil)
	}
	return idx
}

// Source is what one source holds: an etcd key's records (or a Corefile
// line's), at their owner name, and how they are marked for the external
// view.
type Source struct {
	Key, Owner string
	RRs        []dns.RR
	Mark       view.Mark
}

// Put replaces the source old by next: either may be nil (none), and old
// may be a source the index does not hold (one its zone did not accept). It
// adds the owner names whose records changed to changed (when not nil).
func (idx *Index) Put(old, next *Source, changed map[string]bool) {
	if old != nil {
		at := idx.owners[old.Owner]
		if i := slices.Index(at, old); i >= 0 {
			if len(at) == 1 {
				delete(idx.owners, old.Owner)
			} else {
				idx.owners[old.Owner] = slices.Delete(at, i, i+1)
			}
			if changed != nil {
				changed[old.Owner] = true
			}
		}
	}
	if next != nil && len(next.RRs) > 0 {
		idx.owners[next.Owner] = append(idx.owners[next.Owner], next)
		if changed != nil {
			changed[next.Owner] = true
		}
	}
}

// Len returns the number of sources idx holds.
func (idx *Index) Len() int {
	n := 0
	for _, at := range idx.owners {
		n += len(at)
	}
	return n
}

// mark returns the mark of owner's records: view.Join of its sources'.
func (idx *Index) mark(owner string) view.Mark {
	at := idx.owners[owner]
	if len(at) == 0 {
		return view.Unmarked
	}
	m := at[0].Mark
	for _, s := range at[1:] {
		m = view.Join(m, s.Mark)
	}
	return m
}

// records returns the records of owner's sources, each once (two keys with
// the same record make one), in a slice of their own.
func (idx *Index) records(owner string) []dns.RR {
	var rrs []dns.RR
	for _, s := range idx.owners[owner] {
		for _, rr := range s.RRs {
			if !slices.ContainsFunc(rrs, func(o dns.RR) bool { return dns.IsDuplicate(o, rr) }) {
				rrs = append(rrs, rr)
			}
		}
	}
	return rrs
}
