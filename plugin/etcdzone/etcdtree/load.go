package etcdtree

import (
	"context"
	"time"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// Timeout bounds each read from etcd, as the etcd plugin's.
	Timeout = 5 * time.Second
	// PageSize is how many keys a load reads from etcd at a time.
	PageSize = 1000
)

// load reads the zone's keys from etcd, page by page, all at one revision,
// into a new index. It returns the index, the revision read at, and the
// greatest revision at which one of the keys was written.
func (t *tree) load(ctx context.Context) (idx *zone.Index, rev, written int64, err error) {
	idx = t.f.NewIndex()
	from := t.c.Keys.Key
	for {
		page, err := t.read(ctx, from, rev)
		if err != nil {
			return nil, 0, 0, err
		}
		if rev == 0 {
			rev = page.Header.Revision
		}
		for _, kv := range page.Kvs {
			if t.c.Keys.Holds(kv.Key) {
				k := t.f.Read(kv, false)
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

// read reads a page of the zone's keys from key on, at revision rev (0: the
// current one).
func (t *tree) read(ctx context.Context, key string, rev int64) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return t.c.Client.Get(ctx, key,
		clientv3.WithRange(t.c.Keys.end()),
		clientv3.WithLimit(PageSize),
		clientv3.WithRev(rev),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
}
