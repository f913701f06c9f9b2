package etcdzone

import (
	"strings"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// byName returns the zones by their names.
func byName(zones []*blockZone) dnsname.Zones[*blockZone] {
	m := make(dnsname.Zones[*blockZone], len(zones))
	for _, z := range zones {
		m[strings.ToLower(z.Name())] = z
	}
	return m
}

// zoneOf returns the zone name is in, nil when it is in none of them.
func (x *EtcdZone) zoneOf(name string) *blockZone {
	_, z, _ := x.byName.Deepest(name)
	return z
}

// checkReach returns a start-up error when one of zones lies outside every
// zone of the server block: no query the block takes asks for a name of
// it, and the zone's records are never served (the block's own names go
// down the chain: to SERVFAIL when nothing else in the block answers
// them). A block of . reaches every zone; a zone above one of the block's
// reaches that one's names. A zone of the block that etcdzone does not
// serve is no mistake: other plugins of the block may answer it.
func (x *EtcdZone) checkReach(zones []*blockZone) error {
	reach := newReach(x.blockZones)
	for _, z := range zones {
		if reach.reaches(z.Name()) {
			continue
		}
		if len(x.corefile.Zones) > 0 {
			return x.errorf(x.corefile.Where, "zone %s lies outside the server block's zones %v: no query of the block reaches it; name it in the block's key, or leave it out", z.Name(), x.blockZones)
		}
		return x.errorf(x.corefile.Where, "zone %s of the etcd plugin lies outside the server block's zones %v: no query of the block reaches it; give etcd the block's zones (etcd %s)", z.Name(), x.blockZones, strings.Join(x.blockZones, " "))
	}
	return nil
}

// reach holds the zones of a server block, to tell the zones its queries
// reach in as many lookups as a zone's name has labels, however many zones
// the block has (a block may have thousands).
type reach struct {
	// block holds the block's zones; above, them and every name above
	// them.
	block, above dnsname.Zones[bool]
}

// newReach returns the reach of a server block of blockZones.
func newReach(blockZones []string) reach {
	r := reach{block: dnsname.Set(blockZones), above: dnsname.Zones[bool]{".": true}}
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
func (r reach) reaches(zone string) bool { return r.block.Holds(zone) || r.above[zone] }
