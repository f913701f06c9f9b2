package etcdzone

import (
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// follower is z as the follower of its keys in etcd.
type follower struct {
	x *EtcdZone
	z *hosted
}

var _ etcdtree.Follower = follower{}

// NewIndex implements etcdtree.Follower: the records the Corefile adds.
func (f follower) NewIndex() *zone.Index { return zone.NewIndex(f.z.fixed) }

// Read implements etcdtree.Follower.
func (f follower) Read(kv *mvccpb.KeyValue, deleted bool) zone.Source {
	return f.x.readKey(f.z, kv, deleted)
}

// Install implements etcdtree.Follower: it makes idx the zone's, with the
// serial of the zone's last change, and publishes the zone it gives. The
// first index's serial goes on from that of the instance before a reload of
// the Corefile, if any; a first load always moves the serial (from none), so
// the secondaries learn at once what changed while the server was down.
func (f follower) Install(idx *zone.Index, written int64) {
	x, z := f.x, f.z
	first := z.idx == nil
	if x.view != nil {
		if st := x.view.Current(); st != nil {
			z.viewRev = st.Revision
			written = max(written, z.viewRev)
		}
	}
	s := z.serial.At(written)
	if first {
		s = zone.Reloaded(z.server, z.name, s)
	}
	z.idx = idx
	x.commit(z, nil, s)
}

// Changed implements etcdtree.Follower.
func (f follower) Changed(changed map[string]bool, rev int64) {
	f.x.commit(f.z, changed, f.z.serial.At(rev))
}

// Rejudge implements etcdtree.Follower: it builds the zone again after its
// view changed, and refreshes its signatures when their timer asks (the
// signal is shared).
func (f follower) Rejudge() {
	if g := f.z.signing; g != nil && g.due.Swap(false) {
		f.x.refresh(f.z)
		if v := f.z.current.Load(); f.x.view == nil || v != nil && v.State == f.x.view.Current() {
			return
		}
	}
	f.x.rejudge(f.z)
}
