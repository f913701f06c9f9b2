package etcdzone

import (
	"slices"
	"strings"

	"github.com/coredns/coredns/plugin/file"

	"github.com/miekg/dns"
)

// data is what one zone holds in memory: a zone of the file plugin, whose
// tree and lookup answer the queries, and the index that says which etcd key
// (or Corefile line) put which record there, so that a put or a delete of
// one key changes the records of that key alone.
//
// A zone's data is changed only under EtcdZone.mu held for writing, and read
// under it held for reading; data being loaded, which no query sees yet, is
// changed by the loading goroutine alone. Each change of an RRset replaces
// the slice that holds it, so the slices a lookup returned stay as they were
// after the lock is released.
type data struct {
	zone *file.Zone
	// sources holds the records of each source, by the source's name: an
	// etcd key, or a Corefile line (see fixed).
	sources map[string]*source
	// owners holds the sources of the records at each owner name.
	owners map[string][]*source
	// count is the number of records in the zone's tree.
	count int
	// withholds, when not nil, tells the records that the view the zone
	// serves never shows (see view): they are left out of the tree.
	withholds func(dns.RR) bool
}

// source is one etcd key's (or one Corefile line's) share of the zone.
type source struct {
	owner string
	rrs   []dns.RR
}

// newData returns the data of the zone called name with only the apex
// records soa and ns, leaving out of it the records withholds tells (nil:
// none).
func newData(name string, soa *dns.SOA, ns []dns.RR, withholds func(dns.RR) bool) *data {
	z := file.NewZone(name, "")
	z.SOA = soa
	z.NS = ns
	// The file plugin keeps the apex's SOA and NS records apart from the
	// tree, and its lookup takes a name without a node in the tree and
	// without names below it for one that does not exist: an empty zone's
	// apex would be NXDOMAIN. A node with a copy of the SOA (never served:
	// the lookup answers the apex's SOA from the apex records) makes the
	// apex exist.
	z.Tree.Insert(&dns.SOA{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: soa.Ns, Mbox: soa.Mbox})
	return &data{zone: z, sources: map[string]*source{}, owners: map[string][]*source{}, withholds: withholds}
}

// setAll makes each key's records those keys gives it.
func (d *data) setAll(keys []keyRecords) {
	for _, k := range keys {
		d.set(k.key, k.owner, k.rrs)
	}
}

// set makes rrs, all at owner, the records of the source called key,
// replacing those it had; no rrs removes the source.
func (d *data) set(key, owner string, rrs []dns.RR) {
	if old := d.sources[key]; old != nil {
		d.owners[old.owner] = slices.DeleteFunc(d.owners[old.owner], func(s *source) bool { return s == old })
		if len(d.owners[old.owner]) == 0 {
			delete(d.owners, old.owner)
		}
		delete(d.sources, key)
		if old.owner != owner {
			d.rebuild(old.owner)
		}
	}
	if len(rrs) > 0 {
		s := &source{owner: owner, rrs: rrs}
		d.sources[key] = s
		d.owners[owner] = append(d.owners[owner], s)
	}
	d.rebuild(owner)
}

// rebuild makes the tree's records at owner those of owner's sources that
// the view shows, once each (two keys with the same record make one), and
// keeps the zone one that secondaries load: a CNAME at a name takes the
// place of its other records (which no query reaches), and a delegation's
// NS records that of a CNAME at the cut.
func (d *data) rebuild(owner string) {
	if elem, ok := d.zone.Search(owner); ok {
		for _, t := range elem.Types() {
			if t == dns.TypeSOA {
				continue // the apex's node (see newData)
			}
			d.count -= len(elem.Type(t))
			// Tree.Delete drops the RRset of rr's type at rr's owner.
			d.zone.Delete(&dns.ANY{Hdr: dns.RR_Header{Name: owner, Rrtype: t, Class: dns.ClassINET}})
		}
	}
	var shown []dns.RR
	for _, s := range d.owners[owner] {
		for _, rr := range s.rrs {
			if !slices.ContainsFunc(shown, func(o dns.RR) bool { return dns.IsDuplicate(o, rr) }) && (d.withholds == nil || !d.withholds(rr)) {
				shown = append(shown, rr)
			}
		}
	}
	has := func(t uint16) bool {
		return slices.ContainsFunc(shown, func(rr dns.RR) bool { return rr.Header().Rrtype == t })
	}
	switch {
	case has(dns.TypeNS):
		shown = slices.DeleteFunc(shown, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeCNAME })
	case has(dns.TypeCNAME):
		shown = slices.DeleteFunc(shown, func(rr dns.RR) bool { return rr.Header().Rrtype != dns.TypeCNAME })
	}
	for _, rr := range shown {
		// The records are made with their names in lower case, as the
		// file plugin's Zone.Insert would make them: inserted into the
		// tree as they are, they are never written to again.
		d.zone.Tree.Insert(rr)
	}
	d.count += len(shown)
}

// withheldAt returns the records of type qtype (any type for ANY) at owner
// that withholds left out of the tree.
func (d *data) withheldAt(owner string, qtype uint16) []dns.RR {
	if d.withholds == nil {
		return nil
	}
	var out []dns.RR
	for _, s := range d.owners[strings.ToLower(owner)] {
		for _, rr := range s.rrs {
			if (qtype == dns.TypeANY || rr.Header().Rrtype == qtype) && d.withholds(rr) {
				out = append(out, rr)
			}
		}
	}
	return out
}

// rejudge asks withholds again about every record: whether the view shows
// an address record may change with its global addresses.
func (d *data) rejudge() {
	if d.withholds == nil {
		return
	}
	for owner := range d.owners {
		d.rebuild(owner)
	}
}
