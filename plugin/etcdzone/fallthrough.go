package etcdzone

import (
	"context"
	"slices"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// startFallthrough checks that the zones can fall through, and has the
// block's etcd plugin leave their names to the plugins after it: the
// zones answer every name etcd holds, and what etcd does not hold goes on
// to the next backend (a file zone, forward), not to the etcd plugin,
// which would look for it in etcd again, perhaps another etcd (its
// default endpoint, in a block that gives the connection to etcdzone). An
// etcd plugin's zone above one of the zones (etcd . beside etcdzone
// example.com) is not the zones' to take from it: it stays, and it answers
// the names that fall through, which the warning says, unless the etcd
// plugin has a fallthrough of its own for them.
func (x *EtcdZone) startFallthrough(zones []*blockZone) error {
	if x.corefile.Fall.Zones == nil {
		return nil
	}
	if len(x.corefile.DNSSEC.Keys) > 0 {
		return x.errorf(x.corefile.FallWhere, "fallthrough: the zones are signed, and the answers of the plugins after etcdzone would not be: validating resolvers would take them for forgeries")
	}
	kept := x.etcd.Zones[:0:0]
	for _, name := range x.etcd.Zones {
		if !slices.ContainsFunc(zones, func(z *blockZone) bool { return dnsname.In(name, z.Name()) }) {
			kept = append(kept, name)
		}
	}
	x.etcd.Zones = kept
	for _, name := range kept {
		for _, z := range zones {
			if dnsname.In(z.Name(), name) && !x.etcd.Fall.Through(z.Name()) {
				log.Warningf(fallsToEtcd, x.corefile.FallWhere, z.Name(), name, name, z.Name())
			}
		}
	}
	return nil
}

// fallsToEtcd is the warning for a zone, with fallthrough (given where the
// first argument says), below a zone of the etcd plugin, which is the next
// plugin for the names that fall through.
const fallsToEtcd = "%s: fallthrough: zone %s lies in the etcd plugin's zone %s: the names it does not hold go to the etcd plugin, " +
	"which answers them from etcd again (NXDOMAIN), not to the plugins after it (file, forward); " +
	"give the etcd plugin the zones of etcdzone instead of %s (etcd %s), or the etcd plugin's own fallthrough"

// fallsThrough reports whether the question of state, for a name of z,
// goes to the next plugin instead of m, the zone's answer: fallthrough
// covers the name, and it does not exist in the zone (NXDOMAIN; a name
// that a wildcard covers, an empty non-terminal, one below a delegation or
// the owner of a CNAME exists) nor in etcd (a name whose records the view
// shows none of is the view's to answer).
func (x *EtcdZone) fallsThrough(state request.Request, z *blockZone, m *dns.Msg) bool {
	if m.Rcode != dns.RcodeNameError || len(m.Answer) > 0 || !x.corefile.Fall.Through(state.Name()) {
		return false
	}
	v := z.Current()
	if v == nil {
		return false
	}
	rrs, _ := v.Judged(state.Name(), dns.TypeANY)
	return len(rrs) == 0
}

// passOn hands r to the next plugin: through the block's view, if any,
// which judges the answer as it judges those of the block's other backends.
func (x *EtcdZone) passOn(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if x.view != nil {
		return x.view.Fallthrough(ctx, w, r, x.Next)
	}
	return plugin.NextOrFailure(x.Name(), x.Next, ctx, w, r)
}
