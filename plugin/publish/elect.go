package publish

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// campaign takes part in one election, until this replica has held the
// Lease and lost it, or ctx ends. While it holds the Lease, lead writes;
// lead has ended before the Lease is given up at ctx's end and before
// campaign returns, so a shutdown or reload hands the Lease over with no
// write of this replica under way, and two leads of one replica never run
// at once. When renewal fails, client-go ends lead only once it has tried
// to give the Lease up (up to renewDeadline more): a write may then still
// land after the Lease expired (README, Bugs).
func (r *run) campaign(ctx context.Context) {
	var l leading
	// The election ends only once lead has: client-go gives up the Lease
	// when the election's context ends.
	electing, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: r.leaseName, Namespace: r.namespace},
			Client:     r.kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: r.identity},
		},
		LeaseDuration:   r.leaseDuration,
		RenewDeadline:   r.renewDeadline(),
		RetryPeriod:     r.leaseDuration * 2 / 15,
		ReleaseOnCancel: true,
		Name:            r.leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(held context.Context) {
				if !l.begin() {
					return
				}
				defer l.wg.Done()
				held, cancel := context.WithCancel(held)
				defer context.AfterFunc(ctx, cancel)()
				defer cancel()
				r.lead(held)
			},
			OnStoppedLeading: func() {}, // campaign says so, once lead has ended
			OnNewLeader: func(id string) {
				if id != r.identity {
					log.Infof("Lease %s: %s writes", r.leaseName, id)
				}
			},
		},
	})
	if err != nil { // the durations come checked from the Corefile
		log.Errorf("%v", err)
		<-ctx.Done()
		return
	}
	ran := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			l.end()
			stopElecting()
		case <-ran:
		}
	}()
	elector.Run(electing)
	close(ran)
	if !l.end() {
		return
	}
	r.set(leader, 0, r.leaseName)
	r.forgetPublished()
	if ctx.Err() == nil {
		log.Warningf("lost Lease %s: not renewed within %s; campaigning again", r.leaseName, r.renewDeadline())
	}
}

// renewDeadline is how long the writing replica tries to renew the Lease
// before it stops writing, and bounds how long giving it up takes.
func (p *Publish) renewDeadline() time.Duration { return p.leaseDuration * 2 / 3 }

// leading is one election's lead: whether it began, and its end awaited.
// client-go starts lead in a goroutine of its own, which may run late;
// once the election is over it does not begin.
type leading struct {
	mu          sync.Mutex
	over, began bool
	wg          sync.WaitGroup
}

// begin reports whether lead may run, and counts it running.
func (l *leading) begin() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.over {
		return false
	}
	l.began = true
	l.wg.Add(1)
	return true
}

// end closes the election to lead, waits until a running lead returned,
// and reports whether lead ran.
func (l *leading) end() bool {
	l.mu.Lock()
	l.over = true
	began := l.began
	l.mu.Unlock()
	l.wg.Wait()
	return began
}
