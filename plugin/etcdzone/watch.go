package etcdzone

import (
	"context"
	"errors"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"

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
)

// errStale ends a watch that can no longer bring z up to date: etcd
// compacted the revisions it had not seen yet.
var errStale = errors.New("the revisions after the zone's were compacted")

// follow keeps z in memory until ctx ends: it loads the zone, then applies
// what one watch of its keys delivers. It loads the zone again when the
// watch can't catch up (etcd compacted what it missed). While etcd fails,
// the zone keeps what it held, and the failure is logged once.
func (x *EtcdZone) follow(ctx context.Context, z *zone) {
	var failed string // the failure last logged; "" while etcd answers
	fail := func(what string, err error) {
		if ctx.Err() != nil {
			return
		}
		etcdErrors.WithLabelValues(z.server, z.name).Inc()
		if err.Error() != failed {
			log.Warningf("zone %s: %s etcd at %s: %v", z.name, what, x.client, x.client.Explain(err))
			failed = err.Error()
		}
	}
	for delay := time.Duration(0); wait.For(ctx, delay); {
		delay = retry
		d, rev, written, err := x.load(ctx, z)
		if err != nil {
			fail("reading", err)
			continue
		}
		if failed != "" {
			log.Infof("zone %s: reading etcd again", z.name)
			failed = ""
		}
		w := &watch{x: x, z: z, next: written + 1, loaded: rev, pending: d, written: written}
		for err = w.run(ctx, &failed); err != nil && !errors.Is(err, errStale); err = w.run(ctx, &failed) {
			fail("watching", err)
			if !wait.For(ctx, retry) {
				return
			}
		}
		if err != nil {
			log.Infof("zone %s: %v; reading it again", z.name, err)
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
	x      *EtcdZone
	z      *zone
	next   int64
	loaded int64

	pending *data // nil once installed
	written int64
}

// run watches until the watch ends, and returns why. *failed, the failure
// last logged, is cleared once etcd answers again.
func (w *watch) run(ctx context.Context, failed *string) error {
	// The watch has a gRPC stream of its own (etcd's client shares one
	// among the watches of the same metadata): etcd reports progress on a
	// stream only once every watch on it has caught up, and the block's
	// other watches (globaladdr's from etcd) must not hold that back.
	ctx = metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx), "etcdzone", w.z.server+" "+w.z.name)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
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
		log.Infof("zone %s: revisions before %d compacted; watching from there", w.z.name, c)
		w.next = c
		w.changed(c-1, nil)
	}
}

// events applies what one watch delivers, from revision w.next on, until it
// ends, and asks the view again about the zone's records when its global
// addresses change. It returns etcd's compaction revision when w.next was
// compacted, or why else the watch ended.
func (w *watch) events(ctx context.Context, failed *string) (compacted int64, err error) {
	z := w.z
	if w.pending != nil && w.next > w.loaded {
		w.install() // the load's revision is that of the zone's last change
	}
	wch := w.x.client.Watch(ctx, z.key, clientv3.WithRange(z.rangeEnd()), clientv3.WithRev(w.next))
	progress := time.NewTicker(progressEvery)
	defer progress.Stop()
	giveUp := time.Now().Add(catchUpWait)
	for {
		select {
		case <-progress.C:
			switch {
			case w.pending == nil:
				// etcd's progress reports move w.next past the revisions
				// of other keys, so that a watch started again (after a
				// lost leader, say) does not ask for revisions etcd may
				// have compacted since, which would read the zone again
				// and move its serial.
				progress.Reset(progressIdle)
				_ = w.x.client.RequestProgress(ctx)
			case time.Now().After(giveUp):
				log.Warningf("zone %s: etcd reports no progress of the watch; taking revision %d for the zone's last change", z.name, w.loaded)
				w.written = w.loaded // never too early
				w.install()
			default:
				// etcd reports progress once the watch has caught up; an
				// error is as good as no report: asked again next time.
				_ = w.x.client.RequestProgress(ctx)
			}
		case <-z.rejudge:
			if w.pending != nil {
				w.pending.rejudge()
			}
			w.x.rejudge(z)
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
				log.Infof("zone %s: watching etcd again", z.name)
				*failed = ""
			}
			if len(resp.Events) > 0 {
				w.next = max(w.next, resp.Events[len(resp.Events)-1].Kv.ModRevision+1)
			}
			if resp.IsProgressNotify() {
				w.next = max(w.next, resp.Header.Revision+1)
			}
			w.changed(0, resp.Events)
		}
	}
}

// changed takes the events of a watch response: it applies those after
// w.loaded to the zone's data, and moves the zone's last change to the
// revision of the last that concerns the zone, or to rev when there are
// none. It installs the pending data once the events reach the load.
func (w *watch) changed(rev int64, events []*clientv3.Event) {
	x, z := w.x, w.z
	for _, ev := range events {
		if z.holds(ev.Kv.Key) {
			rev = max(rev, ev.Kv.ModRevision)
		}
	}
	// The keys are read before the lock is taken: reading one with a
	// lease asks etcd for the lease's time to live.
	keys := w.read(events)
	if w.pending != nil {
		// Only this goroutine knows of the pending data: no lock.
		w.pending.setAll(keys)
		w.written = max(w.written, rev)
		if w.next > w.loaded {
			w.install()
		}
		return
	}
	if rev == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	z.data.setAll(keys)
	x.moveSerial(z, z.serial.at(rev))
	records.WithLabelValues(z.server, z.name).Set(float64(z.data.count))
}

// read returns the records of the zone's keys that events put or deleted
// after w.loaded.
func (w *watch) read(events []*clientv3.Event) []keyRecords {
	var keys []keyRecords
	for _, ev := range events {
		if ev.Kv.ModRevision > w.loaded && w.z.holds(ev.Kv.Key) {
			keys = append(keys, w.x.readKey(w.z, ev.Kv, ev.Type == clientv3.EventTypeDelete))
		}
	}
	return keys
}

// install makes the pending data the zone's, with the serial of the zone's
// last change. The first data's serial goes on from that of the instance
// before a reload of the Corefile, if any.
func (w *watch) install() {
	x, z, d := w.x, w.z, w.pending
	w.pending = nil
	// The load holds every revision up to its own: a watch started again
	// goes on from there.
	w.next = max(w.next, w.loaded+1)
	x.mu.Lock()
	defer x.mu.Unlock()
	first := z.data == nil
	written := w.written
	if x.view != nil {
		z.viewRev = x.view.Revision()
		written = max(written, z.viewRev)
	}
	s := z.serial.at(written)
	if first {
		s = reloaded(z.server, z.name, s)
	}
	z.data = d
	// A first load always moves the serial (from none), so the secondaries
	// learn at once what changed while the server was down.
	x.moveSerial(z, s)
	d.zone.SOA = x.apex.soa(z.name, z.serial.value())
	records.WithLabelValues(z.server, z.name).Set(float64(d.count))
	if first {
		loaded.WithLabelValues(z.server, z.name).Set(1)
		log.Infof("zone %s loaded: %d records, serial %d", z.name, d.count, z.serial.value())
	}
}
