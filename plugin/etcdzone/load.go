package etcdzone

import (
	"context"
	"time"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// etcdTimeout bounds each read from etcd, as the etcd plugin's.
	etcdTimeout = 5 * time.Second
	// pageSize is how many keys a load reads from etcd at a time.
	pageSize = 1000
)

// load reads z's keys from etcd, page by page, all at one revision, into a
// new index. It returns the index, the revision read at, and the greatest
// revision at which one of the keys was written.
func (x *EtcdZone) load(ctx context.Context, z *hosted) (idx *zone.Index, rev, written int64, err error) {
	idx = zone.NewIndex(z.fixed)
	from := z.key
	for {
		page, err := x.read(ctx, z, from, rev)
		if err != nil {
			return nil, 0, 0, err
		}
		if rev == 0 {
			rev = page.Header.Revision
		}
		for _, kv := range page.Kvs {
			if z.holds(kv.Key) {
				k := x.readKey(z, kv, false)
				idx.Set(k.Key, k.Owner, k.RRs, nil)
				written = max(written, kv.ModRevision)
			}
		}
		if !page.More {
			return idx, rev, written, nil
		}
		from = string(page.Kvs[len(page.Kvs)-1].Key) + "\x00"
	}
}

// read reads a page of z's keys from key on, at revision rev (0: the
// current one).
func (x *EtcdZone) read(ctx context.Context, z *hosted, key string, rev int64) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	return x.etcd.Client.Get(ctx, key,
		clientv3.WithRange(z.rangeEnd()),
		clientv3.WithLimit(pageSize),
		clientv3.WithRev(rev),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
}
