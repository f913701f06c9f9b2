package etcdtree

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

const (
	// progressEvery is how often a read of the history asks etcd whether
	// it has delivered everything up to the revision it reads to.
	progressEvery = 50 * time.Millisecond
	// catchUpWait bounds how long a read of the history waits for that:
	// an etcd (or a proxy) that never reports progress must not keep the
	// zones away.
	catchUpWait = 5 * time.Second
	// maxDeleted bounds the deletions the history keeps; beyond it they
	// are forgotten, and count as a change of every zone at the last of
	// them (never too early).
	maxDeleted = 100_000
)

// history holds the deletions of the tree's keys from revision from on,
// which a load can't see: a zone's last change may be the deletion of one
// of its keys, after its last write. A key written again since it was
// deleted is left out (its write is later). A zone whose last change
// can't be told (etcd compacted the revisions it was in) is taken to have
// changed at floor, which is never too early.
type history struct {
	from    int64
	deleted map[string]int64
	floor   int64
}

// reset forgets the deletions: those from revision from on are to come.
func (h *history) reset(from int64) {
	h.from, h.deleted, h.floor = from, map[string]int64{}, 0
}

// deletedAt notes the deletion of key at rev.
func (h *history) deletedAt(key string, rev int64) {
	if len(h.deleted) >= maxDeleted {
		for _, r := range h.deleted {
			h.floor = max(h.floor, r)
		}
		clear(h.deleted)
	}
	h.deleted[key] = max(h.deleted[key], rev)
}

// written notes a write of key: its deletion before is of no account.
func (h *history) written(key string) { delete(h.deleted, key) }

// reach reads the deletions of t's keys from revision from on, up to those
// it holds. Where etcd compacted some of them, or fails, the zones whose
// last change may be among them are taken to have changed at the last
// revision it could not read.
func (h *history) reach(ctx context.Context, t *Tree, from int64) {
	to := h.from - 1
	if from > to {
		return
	}
	h.from = from
	for from <= to {
		reached, compacted, err := t.deletions(ctx, from, to, h.deletedAt)
		switch {
		case reached >= to:
			return
		case compacted > from:
			// Only the revisions before compacted are gone: the deletions
			// after it are read from there.
			h.floor = max(h.floor, min(compacted-1, to))
			from = compacted
		default:
			if ctx.Err() == nil {
				log.Warningf("%s: the deletions of revisions %d to %d can't be read (%v); taking revision %d for the last change of the zones that may have changed then", t.c.Path, reached+1, to, err, to)
			}
			h.floor = max(h.floor, to)
			return
		}
	}
}

// deletions calls deleted for each deletion of the tree's keys from
// revision from to revision to, in order, and returns the last revision up
// to which it knows them all; when etcd compacted from, etcd's compaction
// revision (the first it still holds) instead.
func (t *Tree) deletions(ctx context.Context, from, to int64, deleted func(key string, rev int64)) (reached, compacted int64, err error) {
	ctx = metadata.AppendToOutgoingContext(ctx, "etcdzone", t.c.Stream+" history")
	ctx, cancel := context.WithTimeout(ctx, catchUpWait)
	defer cancel()
	wch := t.c.Client.Watch(ctx, t.c.Path+"/", clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithFilterPut())
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	reached = from - 1
	for {
		select {
		case <-progress.C:
			// etcd reports progress once the watch has caught up; an
			// error is as good as no report: asked again next time.
			requestProgress(ctx, t.c.Client)
		case resp, ok := <-wch:
			switch {
			case !ok:
				return reached, 0, ctx.Err()
			case resp.CompactRevision != 0:
				return reached, resp.CompactRevision, resp.Err()
			case resp.Err() != nil:
				return reached, 0, resp.Err()
			}
			for _, ev := range resp.Events {
				if rev := ev.Kv.ModRevision; rev <= to {
					deleted(string(ev.Kv.Key), rev)
				}
				reached = max(reached, ev.Kv.ModRevision)
			}
			if resp.IsProgressNotify() {
				reached = max(reached, resp.Header.Revision)
			}
			if reached >= to {
				return to, 0, nil
			}
		}
	}
}

// progressWait bounds how long a watch waits for etcd to take a request of
// a progress report.
const progressWait = time.Second

// requestProgress asks etcd for a progress report of the watches of ctx's
// stream, waiting progressWait at most: while etcd is unreachable the
// request would block, and with it the watch's loop, which also serves the
// zones that join, leave or wait to be judged again. An error is as good
// as no report: it is asked again next time.
func requestProgress(ctx context.Context, c *clientv3.Client) {
	ctx, cancel := context.WithTimeout(ctx, progressWait)
	defer cancel()
	_ = c.RequestProgress(ctx)
}
