package marks

import (
	"context"
	"errors"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var log = clog.NewWithPlugin("globaladdr")

// retry is how long Follow waits after a failed read or watch before it
// reads the tree again.
const retry = time.Second

// readTimeout bounds the read of the whole tree.
const readTimeout = 10 * time.Second

// Follow keeps m current with the tree through c until ctx ends: it reads
// the tree whole, then watches it from the revision read; when the watch
// fails (etcd compacted what it missed, etcd is gone), it keeps the marks
// it has, and reads the tree whole again after a pause. failed is called
// with each failure, for the caller to count and log. Follow returns when
// ctx ends.
func (m *Marks) Follow(ctx context.Context, c *clientv3.Client, failed func(error)) {
	for ctx.Err() == nil {
		rev, err := m.load(ctx, c)
		if err == nil {
			err = m.watch(ctx, c, rev+1)
		}
		if ctx.Err() != nil {
			return
		}
		failed(err)
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}

// load reads the tree whole and puts its marks in use; it returns the
// revision it read.
func (m *Marks) load(ctx context.Context, c *clientv3.Client) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	resp, err := c.Get(rctx, m.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	values := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		values[string(kv.Key)] = kv.Value
	}
	m.Set(values)
	return resp.Header.Revision, nil
}

// errWatchEnded ends a watch whose channel closed while ctx had not.
var errWatchEnded = errors.New("the watch of the tree ended")

// watch applies the tree's changes from revision from on, until the watch
// fails or ctx ends.
func (m *Marks) watch(ctx context.Context, c *clientv3.Client, from int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range c.Watch(wctx, m.prefix, clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				return errors.New("the revisions after the marks read were compacted")
			}
			return err
		}
		for _, ev := range resp.Events {
			switch ev.Type {
			case clientv3.EventTypePut:
				m.put(string(ev.Kv.Key), ev.Kv.Value)
			case clientv3.EventTypeDelete:
				m.remove(string(ev.Kv.Key))
			}
		}
	}
	return errWatchEnded
}
