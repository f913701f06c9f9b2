package etcdzone

import (
	"slices"

	"github.com/miekg/dns"
)

// index holds the records of one zone's etcd keys (and of the Corefile's
// lines), parsed once, by their source and by their owner name: each change
// of one key changes the records of that key alone, and the zone's view is
// built from it (see version). It is changed and read only by the goroutine
// that follows the zone.
type index struct {
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

// newIndex returns an index with the records the Corefile adds to z.
func newIndex(z *zone) *index {
	idx := &index{sources: map[string]*source{}, owners: map[string][]*source{}}
	for name, rrs := range z.fixed {
		idx.set(name, rrs[0].Header().Name, rrs, nil)
	}
	return idx
}

// setAll makes each key's records those keys gives it, and adds the owner
// names whose records changed to changed (when not nil).
func (idx *index) setAll(keys []keyRecords, changed map[string]bool) {
	for _, k := range keys {
		idx.set(k.key, k.owner, k.rrs, changed)
	}
}

// set makes rrs, all at owner, the records of the source called key,
// replacing those it had; no rrs removes the source. It adds the owner
// names whose records changed to changed (when not nil).
func (idx *index) set(key, owner string, rrs []dns.RR, changed map[string]bool) {
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
func (idx *index) records(owner string) []dns.RR {
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
