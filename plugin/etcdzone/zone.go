package etcdzone

import (
	"strings"
	"sync/atomic"

	"github.com/globaladdr/globaladdr/plugin/view"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// zone is one zone of the plugin.
type zone struct {
	// name is the zone's name, lower case and fully qualified.
	name string
	// key is the etcd key of the zone's apex ("/skydns/com/example"): the
	// zone's records are under key + "/", and, for a record of the apex
	// itself, at key.
	key string
	// fixed are the records the Corefile puts into the zone, by a source
	// name of their own: NS records of delegations, and glue.
	fixed map[string][]dns.RR
	// inner are the plugin's zones inside this one, whose keys are theirs:
	// they lie below the key, but are none of this zone's.
	inner []*zone
	// server names the server block in logs, metrics and the serials kept
	// across reloads.
	server string

	// current is the zone as queries and transfers see it; nil until it
	// is loaded (and, with a view, until the view can judge).
	current atomic.Pointer[version]
	// journal keeps the last changes of current.
	journal *journal

	// Changed only by the goroutine that follows the zone: the index
	// (nil until loaded), the serial (current's, or the next one's while
	// the view can't judge), and the view's revision the serial counts.
	idx     *index
	serial  serial
	viewRev int64

	// serialMoved holds a signal while a move of the serial waits to be
	// announced to the secondaries.
	serialMoved chan struct{}
	// rejudge holds a signal while the view's global addresses changed and
	// the zone's records wait to be judged again (see view).
	rejudge chan struct{}
}

// holds reports whether the etcd key is one of z's: key itself, or below
// it, but not in one of z's inner zones. A key that merely begins like it
// ("/skydns/com/example-shop") is not.
func (z *zone) holds(key []byte) bool {
	if !z.under(key) {
		return false
	}
	for _, inner := range z.inner {
		if inner.under(key) {
			return false
		}
	}
	return true
}

// under reports whether the etcd key is z's key or below it.
func (z *zone) under(key []byte) bool {
	rest, ok := strings.CutPrefix(string(key), z.key)
	return ok && (rest == "" || rest[0] == '/')
}

// rangeEnd is the end of the etcd key range that holds z's keys (and those
// of its siblings that begin like it, which holds tells apart).
func (z *zone) rangeEnd() string { return z.key + "0" } // '0' follows '/'

// keyRecords is what one etcd key of a zone holds: its records, at their
// owner name; none when the key was deleted or can't be read.
type keyRecords struct {
	key, owner string
	rrs        []dns.RR
}

// readKey returns the records of the put (kv) or delete of one of z's etcd
// keys. A key that can't be read is logged, counted, and holds none.
func (x *EtcdZone) readKey(z *zone, kv *mvccpb.KeyValue, deleted bool) keyRecords {
	k := keyRecords{key: string(kv.Key)}
	if deleted {
		return k
	}
	owner, rrs, err := x.records(z, kv)
	if err != nil {
		log.Warningf("zone %s: %s: %v; skipped", z.name, kv.Key, err)
		skippedKeys.WithLabelValues(z.server, z.name).Inc()
		return k
	}
	k.owner, k.rrs = owner, rrs
	return k
}

// commit makes s z's serial, and publishes the version of z that idx and
// the view's state give, after a change of the owner names in changed
// (every name when nil): built apart, then made current whole. A change
// of the records always moves the serial. It publishes nothing while the
// view can't judge.
func (x *EtcdZone) commit(z *zone, changed map[string]bool, s serial) {
	var st *view.State
	if x.view != nil {
		if st = x.view.Current(); st == nil {
			x.setSerial(z, s)
			return
		}
	}
	prev := z.current.Load()
	if prev != nil && prev.state != st {
		changed = nil
	}
	if prev != nil && changed != nil && len(changed) == 0 && s == prev.serial {
		return
	}
	next, c := x.build(z, z.idx, prev, changed, st, s)
	if prev != nil && s == prev.serial && len(c.removed)+len(c.added) > 0 {
		s = s.bumped()
		soa := x.apex.soa(z.name, s.value())
		next.serial, next.zone.SOA, c.to = s, soa, soa
	}
	x.setSerial(z, s)
	z.current.Store(next)
	records.WithLabelValues(z.server, z.name).Set(float64(next.count))
	if prev == nil {
		loaded.WithLabelValues(z.server, z.name).Set(1)
		log.Infof("zone %s loaded: %d records, serial %d", z.name, next.count, s.value())
		z.announceSoon()
		return
	}
	if next.serial != prev.serial {
		z.journal.add(c)
		z.announceSoon()
	}
}

// setSerial makes s z's serial.
func (x *EtcdZone) setSerial(z *zone, s serial) {
	z.serial = s
	remember(z.server, z.name, s)
	serialGauge.WithLabelValues(z.server, z.name).Set(float64(s.value()))
}

// announceSoon has z's serial announced to the secondaries.
func (z *zone) announceSoon() { signal(z.serialMoved) }

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
func (x *EtcdZone) rejudge(z *zone) {
	if z.idx == nil {
		return
	}
	s := z.serial.bumped()
	if st := x.view.Current(); st != nil && st.Revision != z.viewRev {
		z.viewRev = st.Revision
		if at := z.serial.at(st.Revision); at != z.serial {
			s = at
		}
	}
	x.commit(z, nil, s)
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
