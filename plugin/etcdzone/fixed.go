package etcdzone

import (
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
)

// placeFixed puts the records the Corefile adds into the zones they lie in:
// each delegation's NS set, below the apex of the deepest zone that holds
// it, and the glue records. It checks that every glue name is a name server
// of the zone or of a delegation, inside a zone, and that every name server
// inside the subdomain it serves has glue, without which no resolver could
// reach it; and that the names of update_allow lie in the zones.
func (x *EtcdZone) placeFixed(zones []*hosted) error {
	in := byName(zones)
	for _, d := range x.corefile.Delegations {
		_, z, _ := in.Deepest(d.Name)
		if z == nil || z.name == d.Name {
			return x.errorf(d.Where, "%q: a delegation must lie below one of the zones %v", d.Name, zoneNames(zones))
		}
		z.fixed["delegate "+d.Name] = x.corefile.Apex.NSSet(d.Name, d.NS)
		z.config.Cuts = append(z.config.Cuts, d.Name)
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
		z.fixed["glue "+g.Name] = x.corefile.Apex.AddressRecords(g.Name, g.Addrs)
	}
	for _, r := range x.corefile.Rules {
		if name := strings.TrimPrefix(r.Name, "*."); name != "@" && name != "*" && name != dnsname.Challenge+"*" && !in.Holds(name) {
			return x.errorf(r.Where, "%q: update_allow's name must lie in one of the zones %v", r.Name, zoneNames(zones))
		}
	}
	return nil
}

// zoneNames returns the names of zones.
func zoneNames(zones []*hosted) []string {
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.name
	}
	return names
}

// warnLoaded warns of what z, loaded for the first time as v, lacks that
// the Corefile most likely meant it to hold: any record from etcd (an empty
// zone is right before external-dns writes its first record, and wrong when
// the etcd plugin's zone or path is not where external-dns writes), and an
// address of each name server that lies in it, without which the NS
// answers and the referrals carry none.
func (x *EtcdZone) warnLoaded(z *hosted, v *zone.Version) {
	if z.idx.Len() == len(z.fixed) {
		log.Warningf("zone %s loaded with no records: etcd (%s) holds no key at or below %s; check that the etcd plugin's zone and path are where external-dns writes (its --coredns-prefix), unless it has written nothing yet", z.name, x.client, z.apexKey)
	}
	for _, ns := range x.corefile.NameServers() {
		if _, in, _ := x.byName.Deepest(ns); in != z || len(v.Addresses(ns)) > 0 {
			continue
		}
		if x.corefile.Glued(ns) {
			log.Warningf("zone %s shows no address of its name server %s: the view leaves out every address of its glue (it has no global address of their family); give glue an address the view can show", z.name, ns)
			continue
		}
		log.Warningf("zone %s holds no address of its name server %s, which lies inside it: NS answers and referrals carry none, and resolvers may not reach it; add its addresses to etcdzone (glue %s ADDRESS...) or write its A or AAAA record to etcd", z.name, ns, ns)
	}
}
