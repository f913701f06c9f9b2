package etcdxfr

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// retry is how long the watch of a zone waits before it starts again after
// it ended.
const retry = time.Second

// zone is one zone etcdxfr makes transferable.
type zone struct {
	// name is the zone's name, lower case and fully qualified.
	name string
	// path is the etcd prefix of the zone's keys, with a trailing slash.
	path   string
	serial *serial
	// changed holds a signal while a change waits to move the serial.
	changed chan struct{}
}

// change records that the zone changed; the serial moves and NOTIFY goes
// out within a second.
func (z *zone) change() {
	select {
	case z.changed <- struct{}{}:
	default: // a change is already waiting; this one goes with it
	}
}

// announce moves z's serial forward after each change, and has the transfer
// plugin notify the secondaries. The changes within a second of the last
// move wait for the next one, together: a burst of writes gives two moves
// and two NOTIFYs. With now set, it notifies at once (a server that starts
// tells the secondaries what they may have missed).
func (x *EtcdXfr) announce(ctx context.Context, z *zone, now bool) {
	if now {
		x.notify(z)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-z.changed:
		}
		if !wait(ctx, z.serial.next()) {
			return
		}
		select {
		case <-z.changed: // came meanwhile: this move covers it
		default:
		}
		s := z.serial.bump(time.Now())
		log.Infof("zone %s changed: serial %d", z.name, s)
		x.notify(z)
	}
}

// notify sends NOTIFY for z to the transfer plugin's secondaries.
func (x *EtcdXfr) notify(z *zone) {
	if err := x.xfr.Notify(z.name); err != nil {
		log.Warningf("zone %s: %v", z.name, err)
	}
}

// watch watches z's keys in etcd, and records every put and delete as a
// change of z. When the watch ends (etcd unreachable, a lost leader) it
// starts again from the revision it had seen, so that nothing is missed.
// When it cannot know what it missed (that revision was compacted, or etcd
// could not be read to learn a revision to start from), it records a change
// once it can read etcd again. A failure is logged once, not at each retry.
func (x *EtcdXfr) watch(ctx context.Context, z *zone) {
	var (
		rev    int64  // the last revision seen; 0 when unknown
		failed string // the failure last logged; "" while etcd answers
	)
	fail := func(what string, err error) {
		if ctx.Err() == nil && err.Error() != failed {
			log.Warningf("zone %s: %s etcd: %v", z.name, what, err)
			failed = err.Error()
		}
	}
	for delay := time.Duration(0); wait(ctx, delay); delay = retry {
		if rev == 0 {
			rctx, cancel := context.WithTimeout(ctx, etcdTimeout)
			resp, err := x.etcd.Client.Get(rctx, z.path, clientv3.WithPrefix(), clientv3.WithCountOnly())
			cancel()
			if err != nil {
				fail("reading", err)
				continue
			}
			if rev = resp.Header.Revision; failed != "" {
				z.change()
			}
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for resp := range x.etcd.Client.Watch(wctx, z.path, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if resp.CompactRevision != 0 {
				log.Infof("zone %s: watched revision compacted; counting it as a change", z.name)
				rev = 0
				z.change()
				break
			}
			if resp.Err() != nil {
				fail("watching", resp.Err())
				break
			}
			if failed != "" {
				log.Infof("zone %s: watching etcd again", z.name)
				failed = ""
			}
			if len(resp.Events) > 0 {
				rev = resp.Events[len(resp.Events)-1].Kv.ModRevision
				z.change()
			}
		}
		cancel()
	}
}

// wait returns true after d, or false as soon as ctx ends.
func wait(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
