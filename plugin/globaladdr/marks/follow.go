package marks

import (
	"context"
	"errors"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/globaladdr/globaladdr/internal/wait"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

var log = clog.NewWithPlugin("globaladdr")

// retry is how long Follow waits after a failed read or watch before it
// reads the zones again.
const retry = time.Second

// readTimeout bounds the read of the zones' keys.
const readTimeout = 10 * time.Second

// Follow keeps m current with the zones' keys through c until ctx ends: it
// reads them whole, then watches them from the revision read (while etcd
// is unreachable, the watch waits for it, and resumes where it was); when
// a watch fails (etcd compacted what it missed, its member lost the
// leader), it keeps the marks it has, and reads the keys whole again after
// a pause. failed is called with each failure, for the caller to count and
// log. Follow returns when ctx ends.
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
		wait.For(ctx, retry)
	}
}

// load reads the zones' keys whole, at one revision, and puts their marks
// in use; it returns the revision it read.
func (m *Marks) load(ctx context.Context, c *clientv3.Client) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	values := map[string][]byte{}
	var rev int64
	for _, z := range m.zones {
		opts := []clientv3.OpOption{clientv3.WithPrefix()}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.Get(rctx, z, opts...)
		if err != nil {
			return 0, err
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			values[string(kv.Key)] = kv.Value
		}
	}
	m.Set(values)
	return rev, nil
}

// errWatchEnded ends a watch whose channel closed while ctx had not.
var errWatchEnded = errors.New("the watch of the tree ended")

// watch applies the changes of the zones' keys from revision from on, one
// watch per zone, until one of the watches fails or ctx ends.
func (m *Marks) watch(ctx context.Context, c *clientv3.Client, from int64) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	if len(m.zones) == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	ended := make(chan error, len(m.zones))
	for _, z := range m.zones {
		go func() { ended <- m.watchZone(wctx, c, z, from) }()
	}
	err := <-ended
	cancel()
	for range len(m.zones) - 1 {
		<-ended
	}
	return err
}

// watchZone applies the changes of the keys below the zone's path z from
// revision from on, until the watch fails or ctx ends.
func (m *Marks) watchZone(ctx context.Context, c *clientv3.Client, z string, from int64) error {
	for resp := range c.Watch(ctx, z, clientv3.WithPrefix(), clientv3.WithRev(from)) {
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
