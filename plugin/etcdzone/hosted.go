package etcdzone

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/view"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// hosted is one zone of the plugin, as it follows etcd and serves its view.
type hosted struct {
	// name is the zone's name, lower case and fully qualified.
	name string
	// keys are the zone's keys in etcd.
	keys etcdtree.Keys
	// fixed are the records the Corefile puts into the zone, by a source
	// name of their own: NS records of delegations, and glue.
	fixed map[string][]dns.RR
	// server names the server block in logs, metrics and the serials kept
	// across reloads.
	server string

	// config is what the Corefile says about the zone.
	config *zone.Zone
	// current is the zone as queries and transfers see it; nil until it
	// is loaded (and, with a view, until the view can judge).
	current atomic.Pointer[zone.Version]
	// journal keeps the last changes of current.
	journal *zone.Journal
	// signing signs the zone; nil when it is not signed.
	signing *signing

	// Changed only by the goroutine that follows the zone: the index
	// (nil until loaded), the serial (current's, or the next one's while
	// the view can't judge), and the view's revision the serial counts.
	idx     *zone.Index
	serial  zone.Serial
	viewRev int64

	// serialMoved holds a signal while a move of the serial waits to be
	// announced to the secondaries.
	serialMoved chan struct{}
	// rejudge holds a signal while the view's global addresses changed and
	// the zone's records wait to be judged again (see view).
	rejudge chan struct{}
}

// readKey returns the records of the put (kv) or delete of one of z's etcd
// keys. A key that can't be read is logged, counted, and holds none.
func (x *EtcdZone) readKey(z *hosted, kv *mvccpb.KeyValue, deleted bool) zone.Source {
	k := zone.Source{Key: string(kv.Key)}
	if deleted {
		return k
	}
	owner, rrs, err := x.decode(z, kv)
	if err != nil {
		log.Warningf("zone %s: %s: %v; skipped", z.name, kv.Key, err)
		skippedKeys.WithLabelValues(z.server, z.name).Inc()
		return k
	}
	k.Owner, k.RRs = owner, rrs
	return k
}

// decode returns the records the etcd key kv of z holds, at their owner
// name, with the TTL the etcd plugin gives them.
func (x *EtcdZone) decode(z *hosted, kv *mvccpb.KeyValue) (string, []dns.RR, error) {
	return zone.Decode(z.name, string(kv.Key), kv.Value, func(s *msg.Service) uint32 { return x.etcdTTL.TTL(kv, s) })
}

// commit makes s z's serial, and publishes the version of z that idx and
// the view's state give, after a change of the owner names in changed
// (every name when nil): built apart, then made current whole. A change
// of the records always moves the serial. It publishes nothing while the
// view can't judge.
func (x *EtcdZone) commit(z *hosted, changed map[string]bool, s zone.Serial) {
	var st *view.State
	if x.view != nil {
		if st = x.view.Current(); st == nil {
			x.setSerial(z, s)
			return
		}
	}
	prev := z.current.Load()
	if prev != nil && prev.State != st {
		changed = nil
	}
	if prev != nil && changed != nil && len(changed) == 0 && s == prev.Serial {
		return
	}
	next, d := zone.Build(z.config, z.idx, prev, changed, st, s)
	x.setSerial(z, next.Serial)
	d = z.publish(prev, next, d)
	recordsGauge.WithLabelValues(z.server, z.name).Set(float64(next.Count()))
	if prev == nil {
		loadedGauge.WithLabelValues(z.server, z.name).Set(1)
		log.Infof("zone %s loaded: %d records, serial %d", z.name, next.Count(), next.Serial.Value())
		z.announceSoon()
		return
	}
	if next.Serial != prev.Serial {
		z.journal.Add(d)
		z.announceSoon()
	}
}

// setSerial makes s z's serial.
func (x *EtcdZone) setSerial(z *hosted, s zone.Serial) {
	z.serial = s
	zone.Remember(z.server, z.name, s)
	serialGauge.WithLabelValues(z.server, z.name).Set(float64(s.Value()))
}

// announceSoon has z's serial announced to the secondaries.
func (z *hosted) announceSoon() { signal(z.serialMoved) }

// signal puts a signal into ch, a channel of capacity 1, unless one waits
// there already: the waiting one stands for both.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// rejudge builds z again after a change of the view's state (its global
// addresses), and counts that as a change of the zone: at the addresses'
// etcd revision when it is new (which moves the serial only if the zone's
// last change was earlier: the first addresses a server learns may be
// older), else as one that etcd does not hold (a file).
func (x *EtcdZone) rejudge(z *hosted) {
	if z.idx == nil {
		return
	}
	s := z.serial.Bumped()
	// A block without a view (a signed internal view) has no revision of
	// its own to count.
	if st := x.state(); st != nil && st.Revision != z.viewRev {
		z.viewRev = st.Revision
		if at := z.serial.At(st.Revision); at != z.serial {
			s = at
		}
	}
	x.commit(z, nil, s)
}

// state returns the view's current state; nil when the block has no view
// or the view has none yet.
func (x *EtcdZone) state() *view.State {
	if x.view == nil {
		return nil
	}
	return x.view.Current()
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

// zoneSet is a set of zone names, in lower case. It finds the zones of a
// name by walking up the name's labels: as many lookups as the name has
// labels, however many zones the set holds.
type zoneSet map[string]bool

// newZoneSet returns the set of names.
func newZoneSet(names []string) zoneSet {
	s := make(zoneSet, len(names))
	for _, name := range names {
		s[strings.ToLower(dns.Fqdn(name))] = true
	}
	return s
}

// holds reports whether name is one of s's zones or lies below one.
func (s zoneSet) holds(name string) bool {
	if s[strings.ToLower(dns.Fqdn(name))] {
		return true
	}
	return slices.ContainsFunc(above(name), func(up string) bool { return s[up] })
}

// above returns the names above name, fully qualified and in lower case:
// its parent first, the root last; none for the root.
func above(name string) []string {
	name = strings.ToLower(dns.Fqdn(name))
	if name == "." {
		return nil
	}
	var up []string
	for i, end := dns.NextLabel(name, 0); !end; i, end = dns.NextLabel(name, i) {
		up = append(up, name[i:])
	}
	return append(up, ".")
}
