package publish

import (
	"context"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/publish/objects"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// checkEvery is how often a publication not ready asks the API server
// again.
const checkEvery = 5 * time.Second

// run is one instance's publication: its connection, and its place in the
// election.
type run struct {
	*Publish
	src       zoneSource
	view      viewSource
	kube      kubernetes.Interface
	dyn       dynamic.Interface
	host      string // the API server's URL, for messages
	namespace string
	leaseName string
	identity  string
	// servers are the block's server labels (package serverlabel).
	servers []string
}

// run waits until the API server has the CRD and grants the RBAC, saying
// what is missing meanwhile, and until the zones are loaded and the view
// knows what it shows them at (a new writer would otherwise delete, at the
// provider, what it does not know yet), then
// campaigns for the Lease until ctx ends, and publishes while it holds it.
// A replica whose zones are not loaded, or whose view lacks a prefix, does
// not campaign: holding the Lease, it would publish nothing, or too little.
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
	r.becameReady()
	for said := false; !r.src.Ready() || !r.view.Settled(); {
		if r.src.Ready() && !said {
			log.Infof("waiting for the external view's global addresses and map prefixes before campaigning for Lease %s: "+
				"until they are known the zones lack what they show", r.leaseName)
			said = true
		}
		if !wait.For(ctx, pollEvery) {
			return
		}
	}
	log.Infof("API server %s: DNSEndpoint objects of namespace %s; campaigning for Lease %s as %s", r.host, r.namespace, r.leaseName, r.identity)
	for ctx.Err() == nil {
		r.campaign(ctx) // returns when leadership is lost: campaign again
	}
}
