package hosted

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/stamp"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

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
func (z *Zone) commit(changed map[string]bool, s zone.Serial) {
	var st *horizon.State
	if z.block.View != nil {
		if st = z.block.View.Current(); st == nil {
			z.setSerial(s)
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
		s, vouched, ready = z.stamped(st, s)
		if z.waiting = !ready; z.waiting {
			time.AfterFunc(stampRetry, z.rejudgeSoon)
			switch {
			case prev == nil:
				z.setSerial(s)
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
	z.setSerial(next.Serial)
	d = z.publish(prev, next, d)
	fromPrev := z.published(next, vouched || z.block.Stamps == nil)
	z.meter.Records(next.Count())
	if prev == nil {
		z.meter.Loaded(true)
		log.Infof("zone %s loaded: %s, serial %d", z, recordCount(next.Count()), next.Serial.Value())
		z.warnLoaded(next)
		z.announceSoon()
		wait.Signal(z.block.Published)
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
func (z *Zone) stamped(st *horizon.State, s zone.Serial) (next zone.Serial, vouched, ready bool) {
	if z.block.Stamps == nil {
		return s, false, true
	}
	if text := z.stampText(st); text != z.stamp {
		rev, ok := z.block.Stamps.Keep(z.name, text)
		if !ok {
			z.stamp = ""
			return s, false, true
		}
		z.stamp, z.stampRev = text, rev
	}
	ctx, cancel := context.WithTimeout(context.Background(), stamp.Timeout)
	defer cancel()
	switch unchanged, err := z.block.Tree.Unchanged(ctx, z.apexKey, z.stampRev); {
	case err != nil:
		log.Debugf("zone %s: whether its keys changed up to revision %d: %v", z, z.stampRev, err)
		return s, false, true
	case !unchanged:
		return s, true, false
	}
	return s.At(z.stampRev), true, true
}

// stampText returns z's stamp at the view's state st: what makes the zone
// besides etcd's records.
func (z *Zone) stampText(st *horizon.State) string {
	apex := z.config.Apex
	sz := stamp.Zone{
		Program: caddy.AppVersion,
		Tree:    z.block.TreeText,
		Zones:   z.block.Zones,
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
func (z *Zone) published(next *zone.Version, sure bool) (fromPrev bool) {
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
func (z *Zone) ixfrFrom() bool { return !z.unsure }

// recordCount says n records in words: "1 record", "2 records".
func recordCount(n int) string {
	if n == 1 {
		return "1 record"
	}
	return strconv.Itoa(n) + " records"
}

// setSerial makes s z's serial.
func (z *Zone) setSerial(s zone.Serial) {
	z.serial = s
	z.meter.Serial(s.Value())
}

// rejudgeSoon has z judged again on the tree's goroutine (follower.Rejudge).
func (z *Zone) rejudgeSoon() {
	if s := z.sub.Load(); s != nil {
		s.Rejudge()
	}
}

// announceSoon has z's serial announced to the secondaries.
func (z *Zone) announceSoon() { wait.Signal(z.serialMoved) }

// rejudge builds z again after a change of the view's state (its global
// addresses): a change of the zone when it shows the records otherwise (see
// commit); at the addresses' etcd revision when it is new (which moves the
// serial only if the zone's last change was earlier: the first addresses a
// server learns may be older).
func (z *Zone) rejudge() {
	if z.idx == nil {
		return
	}
	s := z.serial
	// A block without a view (a signed internal view) has no revision of
	// its own to count.
	if st := z.state(); st != nil && st.Revision != z.viewRev {
		z.viewRev = st.Revision
		s = s.At(st.Revision)
	}
	z.commit(nil, s)
}

// state returns the view's current state; nil when the block has no view
// or the view has none yet.
func (z *Zone) state() *horizon.State {
	if z.block.View == nil {
		return nil
	}
	return z.block.View.Current()
}

// warnLoaded warns of what z, loaded for the first time as v, lacks that
// the Corefile most likely meant it to hold: any record from etcd (an empty
// zone is right before external-dns writes its first record, and wrong when
// the etcd plugin's zone or path is not where external-dns writes), and an
// address of each name server that lies in it, without which the NS
// answers and the referrals carry none.
func (z *Zone) warnLoaded(v *zone.Version) {
	b := z.block
	if z.idx.Len() == len(z.fixed) {
		log.Warningf("zone %s has no record from etcd: etcd (%s) holds no key at or below %s; check that the etcd plugin's zone and path are where external-dns writes (its --coredns-prefix), unless it has written nothing yet", z, b.Etcd, z.apexKey)
	}
	for _, ns := range slices.Sorted(maps.Keys(b.NameServers)) {
		if in, _, _ := b.Names.Deepest(ns); in != z.name || len(v.Addresses(ns)) > 0 {
			continue
		}
		if b.NameServers[ns] {
			log.Warningf("zone %s shows no address of its name server %s: the view leaves out every address of its glue (it has no global address of their family); give glue an address the view can show", z, ns)
			continue
		}
		log.Warningf("zone %s holds no address of its name server %s, which lies inside it: NS answers and referrals carry none, and resolvers may not reach it; add its addresses to etcdzone (glue %s ADDRESS...) or write its A or AAAA record to etcd", z, ns, ns)
	}
}
