package etcdzone

import (
	"strings"

	"github.com/miekg/dns"
)

// zoneMap maps zone names, in lower case and fully qualified, to what each
// zone holds. It finds the deepest zone of a name by walking up the name's
// labels: as many lookups as the name has labels, however many zones it
// holds, and no allocation for a name in lower case (every query asks).
type zoneMap[T any] map[string]T

// newZoneSet returns the zoneMap of names.
func newZoneSet(names []string) zoneMap[bool] {
	m := make(zoneMap[bool], len(names))
	for _, name := range names {
		m[strings.ToLower(dns.Fqdn(name))] = true
	}
	return m
}

// byName returns the zoneMap of zones.
func byName(zones []*hosted) zoneMap[*hosted] {
	m := make(zoneMap[*hosted], len(zones))
	for _, z := range zones {
		m[strings.ToLower(z.name)] = z
	}
	return m
}

// deepest returns what the deepest of m's zones that holds name (name
// itself, or a name above it) holds, and whether there is one.
func (m zoneMap[T]) deepest(name string) (T, bool) {
	name = strings.ToLower(dns.Fqdn(name))
	for i, end := 0, name == "."; !end; i, end = dns.NextLabel(name, i) {
		if v, ok := m[name[i:]]; ok {
			return v, true
		}
	}
	v, ok := m["."]
	return v, ok
}

// holds reports whether name is one of m's zones or lies below one.
func (m zoneMap[T]) holds(name string) bool {
	_, ok := m.deepest(name)
	return ok
}

// checkReach returns a start-up error when one of zones lies outside every
// zone of the server block: no query the block takes asks for a name of
// it, and the zone's records are never served (the block's own names go
// down the chain: to SERVFAIL when nothing else in the block answers
// them). A block of . reaches every zone; a zone above one of the block's
// reaches that one's names. A zone of the block that etcdzone does not
// serve is no mistake: other plugins of the block may answer it.
func (x *EtcdZone) checkReach(zones []*hosted) error {
	reach := newReach(x.blockZones)
	for _, z := range zones {
		if reach.reaches(z.name) {
			continue
		}
		if len(x.zoneNames) > 0 {
			return x.errorf(x.where, "zone %s lies outside the server block's zones %v: no query of the block reaches it; name it in the block's key, or leave it out", z.name, x.blockZones)
		}
		return x.errorf(x.where, "zone %s of the etcd plugin lies outside the server block's zones %v: no query of the block reaches it; give etcd the block's zones (etcd %s)", z.name, x.blockZones, strings.Join(x.blockZones, " "))
	}
	return nil
}

// reach holds the zones of a server block, to tell the zones its queries
// reach in as many lookups as a zone's name has labels, however many zones
// the block has (a block may have thousands).
type reach struct {
	// block holds the block's zones; above, them and every name above
	// them.
	block, above zoneMap[bool]
}

// newReach returns the reach of a server block of blockZones.
func newReach(blockZones []string) reach {
	r := reach{block: newZoneSet(blockZones), above: zoneMap[bool]{".": true}}
	for name := range r.block {
		for i, end := 0, name == "."; !end; i, end = dns.NextLabel(name, i) {
			r.above[name[i:]] = true
		}
	}
	return r
}

// reaches reports whether a query of the block can ask for a name of zone
// (lower case and fully qualified): zone lies at or below one of the
// block's zones, or one of them lies below it.
func (r reach) reaches(zone string) bool { return r.block.holds(zone) || r.above[zone] }
