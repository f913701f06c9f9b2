package etcdzone

import (
	"slices"
	"strings"

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
	for _, z := range zones {
		if err := z.Sign(d.Keys, opts); err != nil {
			return x.errorf(d.Where, "dnssec %s: zone %s: %v", strings.Join(d.Keys, " "), z.Name(), err)
		}
	}
	in := byName(zones)
	for _, r := range d.DS {
		name := r.Record.Hdr.Name
		_, z, _ := in.Deepest(name)
		if z == nil || !slices.Contains(z.Config().Cuts, name) {
			return x.errorf(r.Where, "ds %s: not a delegation of the zones %v", name, zoneNames(zones))
		}
		ds := dns.Copy(r.Record)
		ds.Header().Ttl = x.corefile.Apex.TTL
		z.Fix("ds "+name, ds)
	}
	return nil
}
