package etcdzone

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/stamp"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// hosted is one zone of the plugin, as it follows etcd and serves its view.
type hosted struct {
	// name is the zone's name, lower case and fully qualified.
	name string
	// apexKey is the etcd key of the zone's apex: its keys are at and
	// below it, but for those of the block's zones inside it.
	apexKey string
	// fixed are the records the Corefile puts into the zone, by a source
	// name of their own: NS records of delegations, and glue.
	fixed map[string][]dns.RR
	// server names the server block in the serials kept across reloads.
	server string
	// metrics are the labels of the zone's series.
	metrics series

	// config is what the Corefile says about the zone.
	config *zone.Zone
	// current is the zone as queries and transfers see it; nil until it
	// is loaded (and, with a view, until the view can judge).
	current atomic.Pointer[zone.Version]
	// journal keeps the last changes of current.
	journal *zone.Journal
	// signing signs the zone; nil when it is not signed.
	signing *signing

	// Changed only by the goroutine that follows the etcd tree: the index
	// (nil until loaded), the serial (current's, or the next one's while
	// the view can't judge), and the view's revision the serial counts.
	idx     *zone.Index
	serial  zone.Serial
	viewRev int64

	// stamp is the zone's stamp as the instance last kept it in etcd (see
	// package stamp), "" when it has not, and stampRev the revision at
	// which the key took it. unsure is set while the current version's
	// serial is not vouched for by the stamp (see ixfrFrom).
	stamp    string
	stampRev int64
	unsure   bool
	// waiting is set while a new state of the view (or the zone's first
	// version) waits for the tree to hold the zone's changes up to the
	// stamp's revision (see commit).
	waiting bool

	// serialMoved holds a signal while a move of the serial waits to be
	// announced to the secondaries.
	serialMoved chan struct{}
	// sub is the zone's share of the etcd tree, once it joined; it has
	// the zone judged again (the view's global addresses changed, or the
	// signatures are due), on the tree's goroutine (see rejudgeSoon).
	sub atomic.Pointer[etcdtree.Sub]
}

// errOutside says why a key whose owner name is outside its zone holds no
// record of the zone.
var errOutside = errors.New("its name is outside the zone")

// commit makes s z's serial, and publishes the version of z that idx and
// the view's state give, after a change of the owner names in changed
// (every name when nil): built apart, then made current whole. A change
// of the records always moves the serial, and so does a zone made
// otherwise than its stamp says (see stamped). It publishes nothing while
// the view can't judge; a new state of the view (or, at first, the
// zone's) waits for the tree to hold every change of the zone's keys up to
// its stamp's revision: until then the zone stays as it was.
func (x *EtcdZone) commit(z *hosted, changed map[string]bool, s zone.Serial) {
	var st *horizon.State
	if x.view != nil {
		if st = x.view.Current(); st == nil {
			x.setSerial(z, s)
			return
		}
	}
	prev := z.current.Load()
	vouched := true
	if prev == nil || prev.State != st {
		if prev == nil && z.signing != nil && z.signing.made.IsZero() {
			z.signing.made = time.Now()
		}
		var ready bool
		s, vouched, ready = x.stamped(z, st, s)
		if z.waiting = !ready; z.waiting {
			time.AfterFunc(stampRetry, z.rejudgeSoon)
			switch {
			case prev == nil:
				x.setSerial(z, s)
				return
			case changed == nil:
				return // nothing but the view's state changed
			}
			st = prev.State
		}
	}
	if prev != nil && prev.State != st {
		changed = nil
	}
	if prev != nil && changed != nil && len(changed) == 0 && s == prev.Serial {
		return
	}
	if prev == nil {
		s = zone.Reloaded(z.server, z.name, s, vouched)
	}
	next, d := zone.Build(z.config, z.idx, prev, changed, st, s)
	x.setSerial(z, next.Serial)
	d = z.publish(prev, next, d)
	fromPrev := z.published(next, vouched || x.stamps == nil)
	z.metrics.set(recordsGauge, float64(next.Count()))
	if prev == nil {
		z.metrics.set(loadedGauge, 1)
		log.Infof("zone %s loaded: %s, serial %d", z.name, recordCount(next.Count()), next.Serial.Value())
		x.warnLoaded(z, next)
		z.announceSoon()
		wait.Signal(x.published)
		return
	}
	if next.Serial != prev.Serial {
		if fromPrev {
			z.journal.Add(d)
		}
		z.announceSoon()
	}
}

// stampRetry is how long a version that waits for the tree (see commit)
// waits before it is tried again, when no change of the zone's keys comes
// first: those etcd made before the stamp may be an inner zone's.
const stampRetry = 100 * time.Millisecond

// stamped returns s, the serial of z's next version at the view's state st,
// whether z's stamp in etcd vouches for it, and whether the version may be
// published (see package stamp). When z is made otherwise than its stamp
// says, the stamp is written, and the serial moves to the revision of that
// write, past every serial published before, once the tree holds every
// change etcd made to the zone's keys up to it (ready: a replica that read
// etcd there publishes the same zone under it); until then it is not
// ready. Without a stamp (a block that transfers nothing, or one that etcd
// did not take) it is s, which zone.Build moves by one if the records
// changed.
func (x *EtcdZone) stamped(z *hosted, st *horizon.State, s zone.Serial) (next zone.Serial, vouched, ready bool) {
	if x.stamps == nil {
		return s, false, true
	}
	if text := x.stampText(z, st); text != z.stamp {
		rev, ok := x.stamps.Keep(z.name, text)
		if !ok {
			z.stamp = ""
			return s, false, true
		}
		z.stamp, z.stampRev = text, rev
	}
	ctx, cancel := context.WithTimeout(context.Background(), stamp.Timeout)
	defer cancel()
	switch unchanged, err := x.tree.tree.Unchanged(ctx, z.apexKey, z.stampRev); {
	case err != nil:
		log.Debugf("zone %s: whether its keys changed up to revision %d: %v", z.name, z.stampRev, err)
		return s, false, true
	case !unchanged:
		return s, true, false
	}
	return s.At(z.stampRev), true, true
}

// stampText returns z's stamp at the view's state st: what makes the zone
// besides etcd's records.
func (x *EtcdZone) stampText(z *hosted, st *horizon.State) string {
	apex := z.config.Apex
	sz := stamp.Zone{
		Program: caddy.AppVersion,
		Tree:    fmt.Sprintf("%s, leases' TTLs %d to %d", x.tree.id.path, x.tree.id.minTTL, x.tree.id.maxTTL),
		Zones:   zoneNames(x.zones),
		Records: append([]dns.RR{apex.SOA(z.name, 0)}, apex.NSSet(z.name, apex.NS)...),
	}
	for _, rrs := range z.fixed {
		sz.Records = append(sz.Records, rrs...)
	}
	if st != nil {
		sz.View = st.Rules
	}
	if g := z.signing; g != nil {
		sz.Signing = g.stampText()
	}
	return sz.Text()
}

// published notes that next is z's current version, sure unless its
// stamp could not be kept: for the serials kept across reloads, and for
// ixfrFrom. It returns whether an IXFR may start from the version before
// (see ixfrFrom).
func (z *hosted) published(next *zone.Version, sure bool) (fromPrev bool) {
	zone.Remember(z.server, z.name, next.Serial)
	fromPrev = z.ixfrFrom()
	z.unsure = !sure
	return fromPrev
}

// ixfrFrom reports whether an IXFR may start from z's current version:
// whether a secondary that holds its serial holds that version. A serial
// that a stamp vouched for, or one that moved from there with the changes
// of etcd, is one zone in every process that publishes it; one that moved
// by a change that no stamp holds (etcd refused it) may have been another
// zone in the process before. Any doubt gives the whole zone.
func (z *hosted) ixfrFrom() bool { return !z.unsure }

// recordCount says n records in words: "1 record", "2 records".
func recordCount(n int) string {
	if n == 1 {
		return "1 record"
	}
	return strconv.Itoa(n) + " records"
}

// setSerial makes s z's serial.
func (x *EtcdZone) setSerial(z *hosted, s zone.Serial) {
	z.serial = s
	z.metrics.set(serialGauge, float64(s.Value()))
}

// rejudgeSoon has z judged again on the tree's goroutine (follower.Rejudge).
func (z *hosted) rejudgeSoon() {
	if s := z.sub.Load(); s != nil {
		s.Rejudge()
	}
}

// announceSoon has z's serial announced to the secondaries.
func (z *hosted) announceSoon() { wait.Signal(z.serialMoved) }

// rejudge builds z again after a change of the view's state (its global
// addresses): a change of the zone when it shows the records otherwise (see
// commit); at the addresses' etcd revision when it is new (which moves the
// serial only if the zone's last change was earlier: the first addresses a
// server learns may be older).
func (x *EtcdZone) rejudge(z *hosted) {
	if z.idx == nil {
		return
	}
	s := z.serial
	// A block without a view (a signed internal view) has no revision of
	// its own to count.
	if st := x.state(); st != nil && st.Revision != z.viewRev {
		z.viewRev = st.Revision
		s = s.At(st.Revision)
	}
	x.commit(z, nil, s)
}

// state returns the view's current state; nil when the block has no view
// or the view has none yet.
func (x *EtcdZone) state() *horizon.State {
	if x.view == nil {
		return nil
	}
	return x.view.Current()
}
