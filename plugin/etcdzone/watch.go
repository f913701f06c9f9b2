package etcdzone

import (
	"context"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// retry is how long the loading or the watch of a zone waits before it
// starts again after a failure.
const retry = time.Second

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
			log.Warningf("zone %s: %s etcd: %v", z.name, what, err)
			failed = err.Error()
		}
	}
	for delay := time.Duration(0); sleep(ctx, delay); {
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
		x.install(z, d, written)
		w := &watch{x: x, z: z, next: written + 1, loaded: rev}
		for err = w.run(ctx, &failed); err != nil && !errors.Is(err, errStale); err = w.run(ctx, &failed) {
			fail("watching", err)
			if !sleep(ctx, retry) {
				return
			}
		}
		if err != nil {
			log.Infof("zone %s: %v; reading it again", z.name, err)
		}
		delay = 0
	}
}

// install makes d z's data, loaded from etcd whose last change to z's keys
// was at revision written. The first load's serial goes on from that of
// the instance before a reload of the Corefile, if any.
func (x *EtcdZone) install(z *zone, d *data, written int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	first := z.data == nil
	s := z.serial.at(written)
	if first {
		s = reloaded(z.server, z.name, s)
	}
	z.data = d
	x.moveSerial(z, s)
	d.zone.SOA = x.apex.soa(z.name, z.serial.value())
	records.WithLabelValues(z.server, z.name).Set(float64(d.count))
	if first {
		z.announceSoon() // the secondaries learn what changed while the server was down
		serialGauge.WithLabelValues(z.server, z.name).Set(float64(z.serial.value()))
		loaded.WithLabelValues(z.server, z.name).Set(1)
		log.Infof("zone %s loaded: %d records, serial %d", z.name, d.count, z.serial.value())
	}
}

// watch is one zone's watch of its etcd keys, from revision next on. The
// zone's data holds every change up to revision loaded; the events up to it
// are seen only for the revision of the zone's last change (a key deleted
// after the last write).
type watch struct {
	x      *EtcdZone
	z      *zone
	next   int64
	loaded int64
}

// run watches until the watch ends, and returns why. *failed, the failure
// last logged, is cleared once etcd answers again.
func (w *watch) run(ctx context.Context, failed *string) error {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	z := w.z
	for {
		c, err := w.events(ctx, failed)
		switch {
		case err != nil || ctx.Err() != nil:
			return err
		case c > w.loaded+1:
			return errStale
		}
		// Only revisions the data holds were compacted: the last change
		// among them is not known, so it is taken to be the last one
		// compacted, which is never too early.
		log.Infof("zone %s: revisions up to %d compacted; watching from there", z.name, c)
		w.changed(c-1, nil)
		w.next = c
	}
}

// events applies what one watch delivers, from revision w.next on, until it
// ends. It returns etcd's compaction revision when w.next was compacted, or
// why else the watch ended.
func (w *watch) events(ctx context.Context, failed *string) (compacted int64, err error) {
	z := w.z
	for resp := range w.x.etcd.Client.Watch(ctx, z.key, clientv3.WithRange(z.rangeEnd()), clientv3.WithRev(w.next)) {
		if resp.CompactRevision != 0 {
			return resp.CompactRevision, nil
		}
		if err := resp.Err(); err != nil {
			return 0, err
		}
		if *failed != "" {
			log.Infof("zone %s: watching etcd again", z.name)
			*failed = ""
		}
		if len(resp.Events) > 0 {
			w.changed(0, resp.Events)
			w.next = resp.Events[len(resp.Events)-1].Kv.ModRevision + 1
		}
	}
	if ctx.Err() != nil {
		return 0, nil
	}
	return 0, errors.New("the watch ended")
}

// changed applies the events after w.loaded to the zone's data, and moves
// the serial to the revision of the last of them that concerns the zone, or
// to rev when there are none.
func (w *watch) changed(rev int64, events []*clientv3.Event) {
	x, z := w.x, w.z
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, ev := range events {
		if !z.holds(ev.Kv.Key) {
			continue
		}
		if ev.Kv.ModRevision > w.loaded {
			x.apply(z, z.data, ev.Kv, ev.Type == clientv3.EventTypeDelete)
		}
		rev = max(rev, ev.Kv.ModRevision)
	}
	x.moveSerial(z, z.serial.at(rev))
	records.WithLabelValues(z.server, z.name).Set(float64(z.data.count))
}

// sleep waits for d, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return ctx.Err() == nil
}
