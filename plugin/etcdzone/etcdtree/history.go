package etcdtree

import (
	"context"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

const (
	// progressEvery is how often a read of the history asks etcd whether
	// it has delivered everything up to the revision it reads to.
	progressEvery = 50 * time.Millisecond
	// maxDeleted bounds the deletions the history keeps; beyond it they
	// are forgotten, and count as a change of every zone at the last of
	// them (never too early).
	maxDeleted = 100_000
)

// history holds the deletions of the tree's keys from revision from on,
// which a load can't see: a zone's last change may be the deletion of one
// of its keys, after its last write. A key written again since it was
// deleted is left out (its write is later). A zone whose last change can't
// be told (etcd compacted the revisions it was in) is taken to have changed
// at floor, which is never too early. The deletions before the load are
// read from etcd's history in the background (etcd sends a watch that far
// behind about 10,000 revisions a second): a zone is installed once they
// are read, or after installWait with those read so far, and its last
// change moves when a later deletion arrives (see Tree.place and
// Tree.deleted).
type history struct {
	// from is the first revision whose deletions are known, or on their
	// way.
	from    int64
	deleted map[string]int64
	floor   int64
}

// reset forgets the deletions: those from revision from on are to come.
func (h *history) reset(from int64) {
	h.from, h.deleted, h.floor = from, map[string]int64{}, 0
}

// deletedAt notes the deletion of key at rev. It reports whether the
// deletions kept were forgotten for floor, which is then a change of every
// zone (Tree.deletedAt).
func (h *history) deletedAt(key string, rev int64) (forgot bool) {
	if len(h.deleted) >= maxDeleted {
		for _, r := range h.deleted {
			h.floor = max(h.floor, r)
		}
		clear(h.deleted)
		forgot = true
	}
	h.deleted[key] = max(h.deleted[key], rev)
	return forgot
}

// written notes a write of key: its deletion before is of no account.
func (h *history) written(key string) { delete(h.deleted, key) }

// deletion is the deletion of key at revision rev.
type deletion struct {
	key string
	rev int64
}

// historyRead is what a read of the history delivers to the tree: the
// deletions it found, and, where etcd compacted what it was to read, the
// last revision compacted: the zones that may have changed then are taken
// to have changed at floor.
type historyRead struct {
	deletions []deletion
	floor     int64
	// done is set on a read's last part.
	done bool
}

// reach has the deletions from revision from on read, unless they are
// known or on their way: in the background, until the tree stops; each
// part read comes to the tree's goroutine (Tree.deleted).
func (h *history) reach(t *Tree, from int64) {
	to := h.from - 1
	if from > to {
		return
	}
	h.from = from
	t.reads++
	t.reading.Add(1)
	go func() {
		defer t.reading.Done()
		t.readHistory(t.ctx, from, to, t.noProgress)
	}()
}

// readHistory reads the deletions of t's keys from revision from to revision
// to, sending what each answer of etcd holds to t's goroutine, until it has
// them all (the last part is done) or ctx ends. A failure is logged, and the read
// goes on from where it was.
func (t *Tree) readHistory(ctx context.Context, from, to int64, noProgress bool) {
	send := func(read historyRead) bool {
		select {
		case t.historyReads <- read:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for from <= to {
		var read historyRead
		reached, compacted, err := t.deletions(ctx, from, to, noProgress, func(found []deletion) bool {
			return send(historyRead{deletions: found})
		})
		failed := false
		switch {
		case reached >= to:
			from, read.done = to+1, true
		case compacted > to:
			read.floor, read.done = to, true
			from = compacted
		case compacted > from:
			// Only the revisions before compacted are gone: the
			// deletions after it are read from there.
			read.floor = min(compacted-1, to)
			from = compacted
		case ctx.Err() != nil:
			return
		default:
			from, failed = reached+1, true
			log.Warningf("%s: reading the deletions of revisions %d to %d: %v; reading them again", t.c.Path, from, to, err)
		}
		if !send(read) || failed && !pauseCtx(ctx, retry) {
			return
		}
	}
}

// pauseCtx waits d, or until ctx ends (false).
func pauseCtx(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// deletions calls found with the deletions of the tree's keys from revision
// from to revision to that each answer of etcd holds, in order, until found
// returns false or it has them all, and returns the last revision up to
// which it knows them all; when etcd compacted from, etcd's compaction
// revision (the first it still holds) instead.
//
// Without progress reports (noProgress), it knows that it has them all only
// once it sees a write of the tree's keys after to: it reads the puts too
// (one comes sooner than a deletion), and goes on until one comes.
func (t *Tree) deletions(ctx context.Context, from, to int64, noProgress bool, found func([]deletion) bool) (reached, compacted int64, err error) {
	ctx = metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx), "etcdzone", t.c.Stream+" history")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(from)}
	var progressC <-chan time.Time
	if !noProgress {
		opts = append(opts, clientv3.WithFilterPut())
		progress := time.NewTicker(progressEvery)
		defer progress.Stop()
		progressC = progress.C
	}
	wch := t.c.Client.Watch(ctx, t.prefix(), opts...)
	reached = from - 1
	for {
		select {
		case <-progressC:
			// etcd reports progress once the watch has caught up; an
			// error is as good as no report: asked again next time.
			requestProgress(ctx, t.c.Client)
		case resp, ok := <-wch:
			switch {
			case !ok && ctx.Err() != nil:
				return reached, 0, ctx.Err()
			case !ok:
				return reached, 0, errors.New("the watch ended")
			case resp.CompactRevision != 0:
				return reached, resp.CompactRevision, resp.Err()
			case resp.Err() != nil:
				return reached, 0, resp.Err()
			}
			var dels []deletion
			for _, ev := range resp.Events {
				if rev := ev.Kv.ModRevision; rev <= to && ev.Type == clientv3.EventTypeDelete {
					dels = append(dels, deletion{string(ev.Kv.Key), rev})
				}
			}
			if len(dels) > 0 && !found(dels) {
				return reached, 0, ctx.Err()
			}
			for _, ev := range resp.Events {
				reached = max(reached, ev.Kv.ModRevision)
			}
			if resp.IsProgressNotify() && !noProgress {
				reached = max(reached, resp.Header.Revision)
			}
			if reached >= to {
				return to, 0, nil
			}
		}
	}
}

// deleted takes a part of the history read: each deletion is noted, and is
// a change of the zones that hold its key, which moves their last change
// when it is later; a compaction's floor is one of every zone whose last
// change was before it. Once every read is done, the zones that wait for
// them are installed.
func (t *Tree) deleted(read historyRead) {
	for _, d := range read.deletions {
		if e := t.keys[d.key]; e != nil && e.mod > d.rev {
			continue // written again since: the write is the later change
		}
		t.deletedAt(d.key, d.rev)
		holders(t.subs, d.key, func(s *Sub) { t.changedAt(s, d.rev) })
	}
	if read.floor > 0 {
		t.raiseFloor(read.floor)
	}
	if read.done {
		if t.reads--; t.reads == 0 {
			t.waited = false
			t.installWaiting()
		}
	}
	t.flush()
}

// changedAt counts a change of s's keys at revision rev that its records
// do not show (a deletion before the load): s's last change moves to rev
// when that is later. A zone that waits to be installed is installed with
// it.
func (t *Tree) changedAt(s *Sub, rev int64) {
	switch {
	case s.idx == nil || rev <= max(s.written, s.rev):
	case !s.installed:
		s.written = rev
	default:
		if s.changed == nil {
			s.changed = map[string]bool{}
			t.dirty = append(t.dirty, s)
		}
		s.rev = rev
	}
}

// deletedAt notes the deletion of key at rev in the history; when that
// forgets the deletions kept, their last is a change of every zone.
func (t *Tree) deletedAt(key string, rev int64) {
	if t.history.deletedAt(key, rev) {
		t.raiseFloor(t.history.floor)
	}
}

// raiseFloor makes floor a change of every zone whose last change was
// before it: the deletions before it can't be told.
func (t *Tree) raiseFloor(floor int64) {
	t.history.floor = max(t.history.floor, floor)
	for _, s := range t.all() {
		t.changedAt(s, floor)
	}
}
