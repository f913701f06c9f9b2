package publish

import (
	"context"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/publish/objects"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// checkEvery is how often a publication not ready asks the API server
// again.
const checkEvery = 5 * time.Second

// run is one instance's publication: its connection, and its place in the
// election.
type run struct {
	*Publish
	src       zoneSource
	kube      kubernetes.Interface
	dyn       dynamic.Interface
	host      string // the API server's URL, for messages
	namespace string
	leaseName string
	identity  string
	port      string
	// servers are the block's server labels (package serverlabel).
	servers []string
}

// run waits until the API server has the CRD and grants the RBAC, saying
// what is missing meanwhile, and until the zones are loaded, then
// campaigns for the Lease until ctx ends, and publishes while it holds it.
// A replica whose zones are not loaded does not campaign: holding the
// Lease, it would publish nothing.
func (r *run) run(ctx context.Context) {
	var last string
	for {
		err := objects.Check(ctx, r.kube, r.namespace)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		if msg := err.Error(); msg != last {
			log.Errorf("not ready: %s (API server %s, namespace %s); asking again every %s", msg, r.host, r.namespace, checkEvery)
			last = msg
		}
		if !wait.For(ctx, checkEvery) {
			return
		}
	}
	r.ready.Store(true)
	for !r.src.Ready() {
		if !wait.For(ctx, pollEvery) {
			return
		}
	}
	log.Infof("API server %s: DNSEndpoint objects of namespace %s; campaigning for Lease %s as %s", r.host, r.namespace, r.leaseName, r.identity)

	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: r.leaseName, Namespace: r.namespace},
			Client:     r.kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: r.identity},
		},
		LeaseDuration:   r.leaseDuration,
		RenewDeadline:   r.leaseDuration * 2 / 3,
		RetryPeriod:     r.leaseDuration * 2 / 15,
		ReleaseOnCancel: true,
		Name:            r.leaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: r.lead,
			OnStoppedLeading: func() {
				r.set(leader, 0)
				r.forgetPublished()
				if ctx.Err() == nil {
					log.Warningf("lost Lease %s: not renewed within %s; campaigning again", r.leaseName, r.leaseDuration*2/3)
				}
			},
			OnNewLeader: func(id string) {
				if id != r.identity {
					log.Infof("Lease %s: %s writes", r.leaseName, id)
				}
			},
		},
	})
	if err != nil { // the durations come checked from the Corefile
		log.Errorf("%v", err)
		return
	}
	for ctx.Err() == nil {
		elector.Run(ctx) // returns when leadership is lost: campaign again
	}
}
