package zone

import (
	"slices"

	"github.com/miekg/dns"
)

// Index holds the records of one zone's etcd keys (and of the Corefile's
// lines), parsed once, by their source and by their owner name: each change
// of one key changes the records of that key alone, and each view's zone is
// built from it (see Build). It is not safe for concurrent use: the
// goroutine that follows the zone changes and reads it.
type Index struct {
	// sources holds the records of each source, by the source's name: an
	// etcd key, or a Corefile line (see fixed).
	sources map[string]*source
	// owners holds the sources of the records at each owner name.
	owners map[string][]*source
}

// source is one etcd key's (or one Corefile line's) share of the zone.
type source struct {
	owner string
	rrs   []dns.RR
}

// NewIndex returns an index with the records of fixed, by their source's
// name (the Corefile's records: delegations and glue).
func NewIndex(fixed map[string][]dns.RR) *Index {
	idx := &Index{sources: map[string]*source{}, owners: map[string][]*source{}}
	for name, rrs := range fixed {
		idx.Set(name, rrs[0].Header().Name, rrs, nil)
	}
	return idx
}

// Source is what one source holds: an etcd key's records, at their owner
// name; none when the key was deleted or can't be read.
type Source struct {
	Key, Owner string
	RRs        []dns.RR
}

// SetAll makes each source's records those sources gives it, and adds the
// owner names whose records changed to changed (when not nil).
func (idx *Index) SetAll(sources []Source, changed map[string]bool) {
	for _, s := range sources {
		idx.Set(s.Key, s.Owner, s.RRs, changed)
	}
}

// Set makes rrs, all at owner, the records of the source called key,
// replacing those it had; no rrs removes the source. It adds the owner
// names whose records changed to changed (when not nil).
func (idx *Index) Set(key, owner string, rrs []dns.RR, changed map[string]bool) {
	if old := idx.sources[key]; old != nil {
		idx.owners[old.owner] = slices.DeleteFunc(idx.owners[old.owner], func(s *source) bool { return s == old })
		if len(idx.owners[old.owner]) == 0 {
			delete(idx.owners, old.owner)
		}
		delete(idx.sources, key)
		if changed != nil {
			changed[old.owner] = true
		}
	}
	if len(rrs) > 0 {
		s := &source{owner: owner, rrs: rrs}
		idx.sources[key] = s
		idx.owners[owner] = append(idx.owners[owner], s)
		if changed != nil {
			changed[owner] = true
		}
	}
}

// records returns the records of owner's sources, each once (two keys with
// the same record make one), in a slice of their own.
func (idx *Index) records(owner string) []dns.RR {
	var rrs []dns.RR
	for _, s := range idx.owners[owner] {
		for _, rr := range s.rrs {
			if !slices.ContainsFunc(rrs, func(o dns.RR) bool { return dns.IsDuplicate(o, rr) }) {
				rrs = append(rrs, rr)
			}
		}
	}
	return rrs
}
