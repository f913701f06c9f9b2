package etcdzone

import (
	"slices"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
)

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
		if in, _ := x.byName.deepest(ns); in != z || len(v.Addresses(ns)) > 0 {
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
