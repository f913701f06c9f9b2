package etcdzone

import (
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
)

// placeFixed puts the records the Corefile adds into the zones they lie in:
// each delegation's NS set, below the apex of the deepest zone that holds
// it, and the glue records. It checks that every glue name is a name server
// of the zone or of a delegation, inside a zone, and that every name server
// inside the subdomain it serves has glue, without which no resolver could
// reach it; and that the names of update_allow lie in the zones.
func (x *EtcdZone) placeFixed(zones []*blockZone) error {
	in := byName(zones)
	for _, d := range x.corefile.Delegations {
		_, z, _ := in.Deepest(d.Name)
		if z == nil || z.Name() == d.Name {
			return x.errorf(d.Where, "%q: a delegation must lie below one of the zones %v", d.Name, zoneNames(zones))
		}
		z.Fix("delegate "+d.Name, x.corefile.Apex.NSSet(d.Name, d.NS)...)
		z.Config().Cuts = append(z.Config().Cuts, d.Name)
		for _, ns := range d.NS {
			if dnsname.In(ns, d.Name) && !x.corefile.Glued(ns) {
				return x.errorf(d.Where, "%q lies inside %s: give its address with glue", ns, d.Name)
			}
		}
	}
	for _, g := range x.corefile.Glue {
		_, z, _ := in.Deepest(g.Name)
		switch {
		case z == nil:
			return x.errorf(g.Where, "%q: glue must lie inside one of the zones %v", g.Name, zoneNames(zones))
		case !slices.Contains(x.corefile.NameServers(), g.Name):
			return x.errorf(g.Where, "%q is no name server of ns or of a delegation", g.Name)
		}
		z.Fix("glue "+g.Name, x.corefile.Apex.AddressRecords(g.Name, g.Addrs)...)
	}
	for _, r := range x.corefile.Rules {
		if name := strings.TrimPrefix(r.Name, "*."); name != "@" && name != "*" && name != dnsname.Challenge+"*" && !in.Holds(name) {
			return x.errorf(r.Where, "%q: update_allow's name must lie in one of the zones %v", r.Name, zoneNames(zones))
		}
	}
	return nil
}

// zoneNames returns the names of zones.
func zoneNames(zones []*blockZone) []string {
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.Name()
	}
	return names
}
