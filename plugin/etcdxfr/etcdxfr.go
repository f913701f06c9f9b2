// Package etcdxfr implements a plugin that makes the zones of the etcd plugin
// transferable: it hands their records to the transfer plugin (AXFR, IXFR),
// gives them the NS set and SOA the Corefile names, keeps their serial, and
// has the transfer plugin send NOTIFY when they change.
package etcdxfr

import (
	"context"
	"strings"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/transfer"

	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin(pluginName)

// EtcdXfr is the etcdxfr handler of one server block.
type EtcdXfr struct {
	Next plugin.Handler
	// Zones are the zones it serves, lower case and fully qualified.
	Zones []string

	apex apex
	// where is the Corefile's file and line of the directive, for start-up
	// errors.
	where string

	// Set at start-up: the block's etcd and transfer plugins, and the state
	// of each zone, by name.
	etcd  *etcd.Etcd
	xfr   *transfer.Transfer
	zones map[string]*zone
	// stop ends the zones' watchers; nil before start.
	stop func() error
}

// Name implements plugin.Handler.
func (x *EtcdXfr) Name() string { return pluginName }

// ServeDNS implements plugin.Handler. It answers SOA and NS queries at the
// apex of its zones itself, and puts its own SOA into the replies of the
// plugins below for the rest of its zones. Zone transfers and other zones go
// down the chain untouched.
func (x *EtcdXfr) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) != 1 {
		return plugin.NextOrFailure(x.Name(), x.Next, ctx, w, r)
	}
	q := r.Question[0]
	z := x.zoneOf(q.Name)
	if z == nil || q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR {
		return plugin.NextOrFailure(x.Name(), x.Next, ctx, w, r)
	}
	if (q.Qtype == dns.TypeSOA || q.Qtype == dns.TypeNS) && strings.EqualFold(q.Name, z.name) {
		return x.answerApex(w, r, z)
	}
	return plugin.NextOrFailure(x.Name(), x.Next, ctx, &soaWriter{ResponseWriter: w, x: x, z: z}, r)
}

// zoneOf returns the zone name is in, nil when it is in none of them. It
// compares suffixes, allocating nothing: every query of the block asks.
func (x *EtcdXfr) zoneOf(name string) *zone {
	var best *zone
	for _, z := range x.zones {
		if inZone(name, z.name) && (best == nil || len(z.name) > len(best.name)) {
			best = z
		}
	}
	return best
}

// inZone reports whether name is zone or below it, ignoring case.
func inZone(name, zone string) bool {
	n, l := len(name), len(zone)
	switch {
	case zone == ".":
		return true
	case n < l || !strings.EqualFold(name[n-l:], zone):
		return false
	}
	return n == l || name[n-l-1] == '.'
}

// answerApex answers an SOA or NS query at z's apex.
func (x *EtcdXfr) answerApex(w dns.ResponseWriter, r *dns.Msg, z *zone) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	if r.Question[0].Qtype == dns.TypeSOA {
		m.Answer = []dns.RR{x.soa(z)}
	} else {
		m.Answer = x.apex.nsSet(z.name)
	}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// soa returns z's SOA record as it stands now.
func (x *EtcdXfr) soa(z *zone) *dns.SOA { return x.apex.soa(z.name, z.serial.get()) }
