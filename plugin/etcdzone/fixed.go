package etcdzone

import (
	"net/netip"
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
	for _, d := range x.delegations {
		_, z, _ := in.Deepest(d.name)
		if z == nil || z.name == d.name {
			return x.errorf(d.where, "%q: a delegation must lie below one of the zones %v", d.name, zoneNames(zones))
		}
		z.fixed["delegate "+d.name] = x.apex.NSSet(d.name, d.ns)
		z.config.Cuts = append(z.config.Cuts, d.name)
		for _, ns := range d.ns {
			if dnsname.In(ns, d.name) && !slices.ContainsFunc(x.glue, func(g glue) bool { return g.name == ns }) {
				return x.errorf(d.where, "%q lies inside %s: give its address with glue", ns, d.name)
			}
		}
	}
	for _, g := range x.glue {
		_, z, _ := in.Deepest(g.name)
		switch {
		case z == nil:
			return x.errorf(g.where, "%q: glue must lie inside one of the zones %v", g.name, zoneNames(zones))
		case !x.namesServer(g.name):
			return x.errorf(g.where, "%q is no name server of ns or of a delegation", g.name)
		}
		z.fixed["glue "+g.name] = x.apex.AddressRecords(g.name, g.addrs)
	}
	for _, r := range x.rules {
		if name := strings.TrimPrefix(r.Name, "*."); name != "@" && name != "*" && name != dnsname.Challenge+"*" && !in.Holds(name) {
			return x.errorf(r.Where, "%q: update_allow's name must lie in one of the zones %v", r.Name, zoneNames(zones))
		}
	}
	return nil
}

// namesServer reports whether the Corefile names name as a name server: in
// ns or in a delegation.
func (x *EtcdZone) namesServer(name string) bool {
	if slices.Contains(x.apex.NS, name) {
		return true
	}
	return slices.ContainsFunc(x.delegations, func(d delegation) bool { return slices.Contains(d.ns, name) })
}

// zoneNames returns the names of zones.
func zoneNames(zones []*hosted) []string {
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.name
	}
	return names
}

// delegation is a subdomain the Corefile delegates to other name servers.
type delegation struct {
	name string   // the zone cut, lower case and fully qualified
	ns   []string // its name servers
	// where is the Corefile's file and line, for start-up errors.
	where string
}

// glue is the address of a name server inside the zone, from the Corefile.
type glue struct {
	name  string
	addrs []netip.Addr
	where string
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
	for _, ns := range x.nameServers() {
		if _, in, _ := x.byName.Deepest(ns); in != z || len(v.Addresses(ns)) > 0 {
			continue
		}
		if slices.ContainsFunc(x.glue, func(g glue) bool { return g.name == ns }) {
			log.Warningf("zone %s shows no address of its name server %s: the view leaves out every address of its glue (it has no global address of their family); give glue an address the view can show", z.name, ns)
			continue
		}
		log.Warningf("zone %s holds no address of its name server %s, which lies inside it: NS answers and referrals carry none, and resolvers may not reach it; add its addresses to etcdzone (glue %s ADDRESS...) or write its A or AAAA record to etcd", z.name, ns, ns)
	}
}

// nameServers returns the names of the name servers the Corefile names, in
// ns and in the delegations, each once.
func (x *EtcdZone) nameServers() []string {
	names := slices.Clone(x.apex.NS)
	for _, d := range x.delegations {
		names = append(names, d.ns...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
