// Package etcdtree follows a zone's keys in etcd: it loads them at one
// revision, page by page, keeps them current with one watch, loads them
// again when etcd compacted what the watch missed, and tells the revision of
// the zone's last change (deletions included), of which the zone's serial
// is made.
package etcdtree

import (
	"context"
	"errors"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

const (
	// retry is how long the loading or the watch of a zone waits before
	// it starts again after a failure.
	retry = time.Second
	// progressEvery is how often a watch that catches up with a load asks
	// etcd whether it has delivered everything up to the load's revision.
	progressEvery = 50 * time.Millisecond
	// progressIdle is how often a watch asks for etcd's progress once the
	// zone is installed.
	progressIdle = 30 * time.Second
	// catchUpWait bounds how long a load waits for that: an etcd (or a
	// proxy) that never reports progress must not keep the zone away.
	catchUpWait = 5 * time.Second
	// buildShare paces the builds of the zone from the changes of watch
	// responses: after a build that took d, the next waits until d times
	// buildShare has passed since its start, so that builds take at most
	// 1/buildShare of the time. A change is published at once unless a
	// build just ran (external-dns's second key of a host comes within a
	// millisecond of its first, and a small zone's build takes less); the
	// changes of a flood of writes are taken together while they wait.
	buildShare = 5
)

var log = clog.NewWithPlugin("etcdzone")

// errStale ends a watch that can no longer bring the zone up to date: etcd
// compacted the revisions it had not seen yet.
var errStale = errors.New("the revisions after the zone's were compacted")

// Follower is the zone that a zone's keys in etcd feed.
type Follower interface {
	// NewIndex returns the zone's index before any key is read.
	NewIndex() *zone.Index
	// Read returns the records of the put (kv) or the delete of one of
	// the keys.
	Read(kv *mvccpb.KeyValue, deleted bool) zone.Source
	// Install makes idx, loaded and caught up with etcd, the zone's,
	// whose last change etcd holds was at revision written.
	Install(idx *zone.Index, written int64)
	// Changed publishes the changes of the owner names in changed, made
	// to the installed index, the last at revision rev.
	Changed(changed map[string]bool, rev int64)
	// Rejudge builds the zone again, after its view changed.
	Rejudge()
}

// Config says what to follow, and how to report it.
type Config struct {
	Client *clientv3.Client
	// Where names etcd (its endpoints) in the log; Explain, when not
	// nil, gives a failure its cause in words.
	Where   string
	Explain func(error) error
	Keys    Keys
	// Name names the zone in the log; Stream names the watch's gRPC
	// stream.
	Name, Stream string
	// Errors counts the failed reads and watches of the keys.
	Errors prometheus.Counter
	// Rejudge, when signalled, has the follower's Rejudge called, after
	// the changes that wait.
	Rejudge <-chan struct{}
}

// tree follows one zone's keys.
type tree struct {
	c Config
	f Follower
}

// pause waits d, or until ctx ends (false), meanwhile passing c.Rejudge on
// to f: a change of the view and a refresh of the signatures need no etcd,
// so they go on from what the zone holds while etcd is away.
func (t *tree) pause(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-t.c.Rejudge:
			t.f.Rejudge()
		}
	}
}

// Follow keeps f up to date with c's keys until ctx ends: it loads them,
// then applies what one watch of them delivers. It loads them again when
// the watch can't catch up (etcd compacted what it missed). While etcd
// fails, the zone keeps what it held, and the failure is logged once.
func Follow(ctx context.Context, c Config, f Follower) {
	t := &tree{c: c, f: f}
	var failed string // the failure last logged; "" while etcd answers
	fail := func(what string, err error) {
		if ctx.Err() != nil {
			return
		}
		c.Errors.Inc()
		if err.Error() != failed {
			failed = err.Error()
			if c.Explain != nil {
				err = c.Explain(err)
			}
			log.Warningf("zone %s: %s etcd at %s: %v", c.Name, what, c.Where, err)
		}
	}
	for delay := time.Duration(0); t.pause(ctx, delay); {
		delay = retry
		d, rev, written, err := t.load(ctx)
		if err != nil {
			fail("reading", err)
			continue
		}
		if failed != "" {
			log.Infof("zone %s: reading etcd again", c.Name)
			failed = ""
		}
		w := &watch{t: t, next: written + 1, loaded: rev, pending: d, written: written}
		for err = w.run(ctx, &failed); err != nil && !errors.Is(err, errStale); err = w.run(ctx, &failed) {
			fail("watching", err)
			if !t.pause(ctx, retry) {
				return
			}
		}
		if err != nil {
			log.Infof("zone %s: %v; reading it again", c.Name, err)
		}
		delay = 0
	}
}

// watch is one zone's watch of its etcd keys, from revision next on, after
// a load at revision loaded. Until it has seen every revision up to loaded,
// the load's data is pending: the events up to loaded (deletions after the
// last write to the zone's keys) only tell the revision of the zone's last
// change, written, which makes the serial. Then the data is installed, and
// the watch applies each change to it.
type watch struct {
	t      *tree
	next   int64
	loaded int64

	pending *zone.Index // nil once installed
	written int64
	// idx is the index installed; nil before.
	idx *zone.Index

	// dirty holds the owner names of the changes taken since the last
	// flush, at revisions up to rev; nil when there are none.
	dirty map[string]bool
	rev   int64
	// next flush may come at ready (see buildShare).
	ready time.Time
}

// run watches until the watch ends, and returns why. *failed, the failure
// last logged, is cleared once etcd answers again.
func (w *watch) run(ctx context.Context, failed *string) error {
	// The watch has a gRPC stream of its own (etcd's client shares one
	// among the watches of the same metadata): etcd reports progress on a
	// stream only once every watch on it has caught up, and the block's
	// other watches (globaladdr's from etcd) must not hold that back.
	ctx = metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx), "etcdzone", w.t.c.Stream)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer w.flush()
	for {
		c, err := w.events(ctx, failed)
		switch {
		case err != nil || ctx.Err() != nil:
			return err
		case c > w.loaded+1:
			return errStale
		}
		// Only revisions the load holds were compacted: the last change
		// among them is not known, so it is taken to be the last one
		// compacted, which is never too early.
		log.Infof("zone %s: revisions before %d compacted; watching from there", w.t.c.Name, c)
		w.next = c
		w.changed(c-1, nil)
		w.flush()
	}
}

// events applies what one watch delivers, from revision w.next on, until it
// ends, and asks the view again about the zone's records when its global
// addresses change. It returns etcd's compaction revision when w.next was
// compacted, or why else the watch ended.
func (w *watch) events(ctx context.Context, failed *string) (compacted int64, err error) {
	c := w.t.c
	if w.pending != nil && w.next > w.loaded {
		w.install() // the load's revision is that of the zone's last change
	}
	wch := c.Client.Watch(ctx, c.Keys.Key, clientv3.WithRange(c.Keys.end()), clientv3.WithRev(w.next))
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	giveUp := time.Now().Add(catchUpWait)
	var pace <-chan time.Time // fires when the changes waiting may be published
	for {
		select {
		case <-pace:
			pace = nil
			w.flush()
		case <-progress.C:
			switch {
			case w.pending == nil:
				// etcd's progress reports move w.next past the revisions
				// of other keys, so that a watch started again (after a
				// lost leader, say) does not ask for revisions etcd may
				// have compacted since, which would read the zone again
				// and move its serial.
				progress.Reset(progressIdle)
				requestProgress(ctx, c.Client)
			case time.Now().After(giveUp):
				log.Warningf("zone %s: etcd reports no progress of the watch; taking revision %d for the zone's last change", c.Name, w.loaded)
				w.written = w.loaded // never too early
				w.install()
			default:
				// etcd reports progress once the watch has caught up; an
				// error is as good as no report: asked again next time.
				requestProgress(ctx, c.Client)
			}
		case <-c.Rejudge:
			// Pending data is judged when it is installed.
			w.flush()
			w.t.f.Rejudge()
		case resp, ok := <-wch:
			switch {
			case !ok && ctx.Err() != nil:
				return 0, nil
			case !ok:
				return 0, errors.New("the watch ended")
			case resp.CompactRevision != 0:
				return resp.CompactRevision, nil
			case resp.Err() != nil:
				return 0, resp.Err()
			}
			if *failed != "" {
				log.Infof("zone %s: watching etcd again", c.Name)
				*failed = ""
			}
			if len(resp.Events) > 0 {
				w.next = max(w.next, resp.Events[len(resp.Events)-1].Kv.ModRevision+1)
			}
			if resp.IsProgressNotify() {
				w.next = max(w.next, resp.Header.Revision+1)
			}
			w.changed(0, resp.Events)
			switch wait := time.Until(w.ready); {
			case wait <= 0:
				w.flush()
			case pace == nil && w.dirty != nil:
				pace = time.After(wait)
			}
		}
	}
}

// changed takes the events of a watch response: it applies those after
// w.loaded to the zone's data, and moves the zone's last change to the
// revision of the last that concerns the zone, or to rev when there are
// none. It installs the pending data once the events reach the load.
func (w *watch) changed(rev int64, events []*clientv3.Event) {
	for _, ev := range events {
		if w.t.c.Keys.Holds(ev.Kv.Key) {
			rev = max(rev, ev.Kv.ModRevision)
		}
	}
	keys := w.read(events)
	if w.pending != nil {
		w.pending.SetAll(keys, nil)
		w.written = max(w.written, rev)
		if w.next > w.loaded {
			w.install()
		}
		return
	}
	if rev == 0 {
		return
	}
	if w.dirty == nil {
		w.dirty = map[string]bool{}
	}
	w.idx.SetAll(keys, w.dirty)
	w.rev = max(w.rev, rev)
}

// flush publishes the changes taken since the last flush, if any, and sets
// when the next may come (see buildShare).
func (w *watch) flush() {
	if w.dirty == nil {
		return
	}
	start := time.Now()
	w.t.f.Changed(w.dirty, w.rev)
	w.dirty, w.rev = nil, 0
	w.ready = start.Add(buildShare * time.Since(start))
}

// read returns the records of the zone's keys that events put or deleted
// after w.loaded.
func (w *watch) read(events []*clientv3.Event) []zone.Source {
	var keys []zone.Source
	for _, ev := range events {
		if ev.Kv.ModRevision > w.loaded && w.t.c.Keys.Holds(ev.Kv.Key) {
			keys = append(keys, w.t.f.Read(ev.Kv, ev.Type == clientv3.EventTypeDelete))
		}
	}
	return keys
}

// install makes the pending index the zone's, with the revision of the
// zone's last change.
func (w *watch) install() {
	w.idx, w.pending = w.pending, nil
	// The load holds every revision up to its own: a watch started again
	// goes on from there.
	w.next = max(w.next, w.loaded+1)
	w.t.f.Install(w.idx, w.written)
}
