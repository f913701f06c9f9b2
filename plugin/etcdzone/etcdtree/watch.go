package etcdtree

import (
	"context"
	"errors"
	"time"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// progressIdle is how often the watch asks for etcd's progress: etcd's
// progress reports move the revision the watch goes on from past the
// revisions of other keys, so that a watch started again (after a lost
// leader, say) does not ask for revisions etcd may have compacted since,
// which would read the tree again and move the zones' serials.
const progressIdle = 30 * time.Second

// watch applies what one watch of the tree delivers, from revision t.next
// on, to the zones' indexes, until it ends, and returns why: errStale when
// etcd compacted t.next. It serves the zones that join, leave or wait to
// be judged again. answered is called with each response.
func (t *Tree) watch(ctx context.Context, answered func(what string)) error {
	ctx = metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx), "etcdzone", t.c.Stream)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer t.flush()
	wch := t.c.Client.Watch(ctx, t.prefix(), clientv3.WithPrefix(), clientv3.WithRev(t.next))
	progress := time.NewTicker(progressIdle)
	defer progress.Stop()
	var pace <-chan time.Time // fires when the changes waiting may be published
	for {
		select {
		case <-pace:
			pace = nil
			t.flush()
		case <-progress.C:
			if !t.noProgress {
				requestProgress(ctx, t.c.Client)
			}
		case <-t.kick:
			t.serve()
		case read := <-t.historyReads:
			t.deleted(read)
		case <-t.installBy:
			t.waitedLong()
		case resp, ok := <-wch:
			switch {
			case !ok && ctx.Err() != nil:
				return nil
			case !ok:
				return errors.New("the watch ended")
			case resp.CompactRevision != 0:
				return errStale
			case resp.Err() != nil:
				return resp.Err()
			}
			answered("watching")
			if resp.IsProgressNotify() && !t.noProgress {
				t.next = max(t.next, resp.Header.Revision+1)
			}
			for _, ev := range resp.Events {
				t.apply(ev)
			}
			switch wait := time.Until(t.ready); {
			case wait <= 0:
				t.flush()
			case pace == nil && len(t.dirty) > 0:
				pace = time.After(wait)
			}
		}
	}
}

// apply applies one event to the tree's keys, and to the indexes of the
// zones that hold its key.
func (t *Tree) apply(ev *clientv3.Event) {
	key, rev := string(ev.Kv.Key), ev.Kv.ModRevision
	t.next = max(t.next, rev+1)
	var old *zone.Source
	if e := t.keys[key]; e != nil {
		old = e.src
	} else {
		t.sorted = nil // a new key
	}
	var e *entry
	if ev.Type == clientv3.EventTypeDelete {
		t.sorted = nil
		delete(t.keys, key)
		t.deletedAt(key, rev)
	} else {
		src, err := t.c.Read(key, ev.Kv)
		e = &entry{src: src, err: err, mod: rev}
		t.keys[key] = e
		t.history.written(key)
	}
	holders(t.subs, key, func(s *Sub) {
		if s.idx == nil {
			return // not placed yet: placed from the tree's keys
		}
		var src *zone.Source
		if e != nil && s.f.Accept(key, e.src, e.err) {
			src = e.src
		}
		if !s.installed {
			s.idx.Put(old, src, nil)
			s.written = max(s.written, rev)
			return
		}
		if s.changed == nil {
			s.changed = map[string]bool{}
			t.dirty = append(t.dirty, s)
		}
		s.idx.Put(old, src, s.changed)
		s.rev = max(s.rev, rev)
	})
}

// flush publishes the changes waiting, if any, and sets when the next may
// come (see buildShare).
func (t *Tree) flush() {
	if len(t.dirty) == 0 {
		return
	}
	start := time.Now()
	for _, s := range t.dirty {
		s.call(func() { s.f.Changed(s.changed, s.rev) })
		s.written = max(s.written, s.rev)
		s.changed, s.rev = nil, 0
	}
	t.dirty = t.dirty[:0]
	t.ready = start.Add(buildShare * time.Since(start))
}
