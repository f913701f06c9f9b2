package hosted

import (
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
)

// follower is z as the follower of its keys in the etcd tree.
type follower struct{ z *Zone }

// Follower returns z as the follower of its keys in the etcd tree.
func (z *Zone) Follower() etcdtree.Follower { return follower{z} }

// Joined makes sub z's share of the etcd tree, which Follower follows.
func (z *Zone) Joined(sub *etcdtree.Sub) { z.sub.Store(sub) }

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
		log.Warningf("zone %s: %s: %v; skipped", f.z, key, err)
		f.z.meter.Skipped()
		return false
	}
	return true
}

// Install implements etcdtree.Follower: it makes idx the zone's, with the
// serial of the zone's last change, and publishes the zone it gives (see
// commit: the first version of a reloaded Corefile's instance goes on from
// the serial of the one before).
func (f follower) Install(idx *zone.Index, written int64) {
	z := f.z
	if z.block.View != nil {
		if st := z.block.View.Current(); st != nil {
			z.viewRev = st.Revision
			written = max(written, z.viewRev)
		}
	}
	z.idx = idx
	z.commit(nil, z.serial.At(written))
}

// Changed implements etcdtree.Follower.
func (f follower) Changed(changed map[string]bool, rev int64) {
	f.z.commit(changed, f.z.serial.At(rev))
}

// Rejudge implements etcdtree.Follower: it refreshes the zone's signatures
// when their timer asks, and builds the zone again when its view changed,
// or when a version waits for the tree (see commit).
func (f follower) Rejudge() {
	if g := f.z.signing; g != nil && g.due.Swap(false) {
		f.z.refresh()
	}
	if v := f.z.current.Load(); !f.z.waiting && (f.z.block.View == nil || v != nil && v.State == f.z.block.View.Current()) {
		return
	}
	f.z.rejudge()
}

// Failed implements etcdtree.Follower.
func (f follower) Failed() { f.z.meter.Failed() }
