package etcdtree

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// Timeout bounds each read from etcd, as the etcd plugin's.
	Timeout = 5 * time.Second
	// PageSize is how many keys a load reads from etcd at a time.
	PageSize = 1000
)

// load reads the tree's keys from etcd, page by page, all at one revision,
// and places them in the zones' indexes (see place). The watch goes on
// from the next revision.
func (t *Tree) load(ctx context.Context) error {
	t.checkProgress(ctx)
	keys := map[string]*entry{}
	var rev int64
	for from := t.prefix(); ; {
		page, err := t.read(ctx, from, rev)
		if err != nil {
			return err
		}
		if rev == 0 {
			rev = page.Header.Revision
		}
		for _, kv := range page.Kvs {
			key := string(kv.Key)
			src, err := t.c.Read(key, kv)
			keys[key] = &entry{src: src, err: err, mod: kv.ModRevision}
		}
		if !page.More {
			break
		}
		from = string(page.Kvs[len(page.Kvs)-1].Key) + "\x00"
	}
	t.keys, t.sorted, t.next, t.dirty, t.waiting = keys, nil, rev+1, nil, nil
	t.history.reset(rev + 1)
	t.place(t.all())
	return nil
}

// read reads a page of the tree's keys from key on, at revision rev (0: the
// current one).
func (t *Tree) read(ctx context.Context, key string, rev int64) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return t.c.Client.Get(ctx, key,
		clientv3.WithRange(clientv3.GetPrefixRangeEnd(t.prefix())),
		clientv3.WithLimit(PageSize),
		clientv3.WithRev(rev),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
}
