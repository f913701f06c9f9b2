package etcdzone

import (
	"strings"

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

	// Guarded by EtcdZone.mu.
	data   *data // nil until loaded
	serial serial
	// viewRev is the view's Revision the serial counts.
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

// moveSerial makes s z's serial, and has it announced when it moved. The
// caller holds x.mu for writing.
func (x *EtcdZone) moveSerial(z *zone, s serial) {
	if s == z.serial {
		return
	}
	z.serial = s
	remember(z.server, z.name, s)
	serialGauge.WithLabelValues(z.server, z.name).Set(float64(s.value()))
	if z.data != nil {
		z.data.zone.SOA = x.apex.soa(z.name, s.value())
	}
	z.announceSoon()
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

// rejudge asks the view again about z's address records, after a change of
// its global addresses, and counts that as a change of the zone: at the
// addresses' etcd revision when it is new (which moves the serial only if
// the zone's last change was earlier: the first addresses a server learns
// may be older), else as one that etcd does not hold (a file).
func (x *EtcdZone) rejudge(z *zone) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if z.data == nil {
		return
	}
	z.data.rejudge()
	records.WithLabelValues(z.server, z.name).Set(float64(z.data.count))
	// The addresses' revision moves the serial when it is past the zone's
	// last change; otherwise the change counts as one etcd does not hold.
	s := z.serial.bumped()
	if rev := x.view.Revision(); rev != z.viewRev {
		z.viewRev = rev
		if at := z.serial.at(rev); at != z.serial {
			s = at
		}
	}
	x.moveSerial(z, s)
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
