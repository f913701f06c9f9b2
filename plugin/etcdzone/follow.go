package etcdzone

import (
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
)

// follower is z as the follower of its keys in the etcd tree.
type follower struct {
	x *EtcdZone
	z *hosted
}

var _ etcdtree.Follower = follower{}

// NewIndex implements etcdtree.Follower: the records the Corefile adds.
func (f follower) NewIndex() *zone.Index { return zone.NewIndex(f.z.fixed) }

// Accept implements etcdtree.Follower: the zone serves a key's records at
// a name in the zone. A key that can't be read is logged, counted, and
// holds none.
func (f follower) Accept(key string, src *zone.Source, err error) bool {
	if err == nil && !dnsname.In(src.Owner, f.z.name) {
		err = errOutside
	}
	if err != nil {
		log.Warningf("zone %s: %s: %v; skipped", f.z.name, key, err)
		f.z.metrics.inc(skippedKeys)
		return false
	}
	return true
}

// Install implements etcdtree.Follower: it makes idx the zone's, with the
// serial of the zone's last change, and publishes the zone it gives (see
// commit: the first version of a reloaded Corefile's instance goes on from
// the serial of the one before).
func (f follower) Install(idx *zone.Index, written int64) {
	x, z := f.x, f.z
	if x.view != nil {
		if st := x.view.Current(); st != nil {
			z.viewRev = st.Revision
			written = max(written, z.viewRev)
		}
	}
	z.idx = idx
	x.commit(z, nil, z.serial.At(written))
}

// Changed implements etcdtree.Follower.
func (f follower) Changed(changed map[string]bool, rev int64) {
	f.x.commit(f.z, changed, f.z.serial.At(rev))
}

// Rejudge implements etcdtree.Follower: it refreshes the zone's signatures
// when their timer asks, and builds the zone again when its view changed,
// or when a version waits for the tree (see commit).
func (f follower) Rejudge() {
	if g := f.z.signing; g != nil && g.due.Swap(false) {
		f.x.refresh(f.z)
	}
	if v := f.z.current.Load(); !f.z.waiting && (f.x.view == nil || v != nil && v.State == f.x.view.Current()) {
		return
	}
	f.x.rejudge(f.z)
}

// Failed implements etcdtree.Follower.
func (f follower) Failed() { f.z.metrics.inc(etcdErrors) }
