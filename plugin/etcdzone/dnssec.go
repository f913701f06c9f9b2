package etcdzone

import (
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// newSigners has each of zones signed when the Corefile has keys, and puts
// the delegations' DS records into the zones.
func (x *EtcdZone) newSigners(zones []*blockZone) error {
	d := x.corefile.DNSSEC
	if len(d.Keys) == 0 {
		if len(d.DS) > 0 {
			return x.errorf(d.DS[0].Where, "ds needs dnssec: the zone is not signed")
		}
		return nil
	}
	opts := d.Options
	opts.KeyTTL = x.corefile.Apex.TTL
	if err := opts.Check(); err != nil {
		return x.errorf(d.Where, "dnssec_validity, dnssec_refresh, dnssec_jitter: %v", err)
	}
	now := time.Now()
	for _, z := range zones {
		if err := z.Sign(d.Keys, opts, now); err != nil {
			return x.errorf(d.Where, "dnssec %s: zone %s: %v", strings.Join(d.Keys, " "), z.Name(), err)
		}
	}
	in := byName(zones)
	ds := map[*blockZone]map[string][]dns.RR{}
	for _, r := range d.DS {
		name := r.Record.Hdr.Name
		_, z, _ := in.Deepest(name)
		if z == nil || !slices.Contains(z.Config().Cuts, name) {
			return x.errorf(r.Where, "ds %s: not a delegation of the zones %v", name, zoneNames(zones))
		}
		rr := dns.Copy(r.Record)
		rr.Header().Ttl = x.corefile.Apex.TTL
		if ds[z] == nil {
			ds[z] = map[string][]dns.RR{}
		}
		ds[z][name] = append(ds[z][name], rr)
	}
	for z, byName := range ds {
		for name, rrs := range byName {
			z.Fix("ds "+name, rrs...)
		}
	}
	return nil
}
