package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"

	"github.com/globaladdr/globaladdr/plugin/pkg/serverlabel"
	"github.com/globaladdr/globaladdr/plugin/publish/endpoints"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// requestTimeout bounds each request to the API server.
const requestTimeout = 10 * time.Second

// start is publish's OnStartup for the server block of cfg, also run for the
// new instance when the Corefile is reloaded: it finds the block's
// etcdzone, reads the API server's connection, and starts the
// publication. What it can't use stops the start with the cause; what the
// API server says of the CRD and the RBAC comes later, and leaves the
// plugin not ready until it is right.
func (p *Publish) start(cfg *dnsserver.Config) error {
	src, ok := cfg.Handler("etcdzone").(zoneSource)
	if !ok {
		return p.errorf("no etcdzone in this server block: publish publishes the zones etcdzone serves")
	}
	served := src.ServedZones()
	for _, z := range p.zones {
		if !slices.Contains(served, z) {
			return p.errorf("zone %s: etcdzone serves %s, not it: publish publishes a zone etcdzone serves", z, strings.Join(served, ", "))
		}
	}
	view, ok := cfg.Handler("globaladdr").(viewSource)
	if !ok {
		return p.errorf("no globaladdr in this server block: publish publishes an external view, and without globaladdr the zone holds the internal addresses")
	}
	if view.Tunnel() == "" && slices.ContainsFunc(p.properties, func(pr endpoints.Property) bool { return pr.Tunnelled }) {
		return p.errorf("property ... tunnelled: globaladdr has no tunnel, so no endpoint is tunnelled; give globaladdr a tunnel, or the property for every endpoint")
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: p.kubeconfig}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: p.context})
	rc, err := loader.ClientConfig()
	if err != nil {
		if p.kubeconfig == "" {
			return p.errorf("not in a cluster (no service account): give kubeconfig FILE")
		}
		return p.errorf("kubeconfig %s: %v", p.kubeconfig, err)
	}
	rc.Timeout = requestTimeout
	rc.UserAgent = "coredns-" + pluginName
	namespace := p.namespace
	if namespace == "" {
		if namespace, _, err = loader.Namespace(); err != nil {
			return p.errorf("the namespace: %v", err)
		}
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return p.errorf("%v", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return p.errorf("%v", err)
	}
	lease := p.lease
	if lease == "" {
		lease = leaseName(setOf(p.zones[0], p.setName))
	}
	r := &run{
		Publish:   p,
		src:       src,
		view:      view,
		kube:      kube,
		dyn:       dyn,
		host:      rc.Host,
		namespace: namespace,
		leaseName: lease,
		identity:  identity(),
		servers:   serverlabel.Of(cfg),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.mu.Lock()
	p.cancel, p.done = cancel, done
	p.mu.Unlock()
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	return nil
}

// stop ends the publication, giving up the Lease if this replica holds it
// so that another takes over at once. It deletes nothing: a name leaves the
// objects only when it leaves the zone.
func (p *Publish) stop() error {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.cancel, p.done = nil, nil
	p.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-time.After(p.leaseDuration):
		// An object write under way ends at once; giving the Lease up
		// takes at most renewDeadline, two thirds of the Lease.
		log.Warningf("the publication did not end within %s", p.leaseDuration)
	}
	return nil
}

// errorf returns a start-up error naming the directive's place.
func (p *Publish) errorf(format string, args ...any) error {
	return plugin.Error(pluginName, fmt.Errorf("%s: %s", p.where, fmt.Sprintf(format, args...)))
}

// identity returns this replica's name in the Lease: its host's name and a
// random suffix, since two replicas (or a reloaded instance and the old
// one) may share a host name.
func identity() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}
