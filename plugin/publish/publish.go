// Package publish implements a plugin that keeps a zone of its server
// block, as etcdzone serves and transfers it (for the external view: what
// the Internet may see), in external-dns's DNSEndpoint objects, so that a
// second external-dns (--source=crd) publishes it with any of its
// providers. One replica writes, chosen by a Kubernetes Lease; it writes
// an object only when its content changes.
package publish

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin"

	"github.com/globaladdr/globaladdr/plugin/publish/endpoints"

	"github.com/miekg/dns"
)

// Publish is the publish handler of one server block.
type Publish struct {
	Next plugin.Handler

	// zones are the zones published, fully qualified.
	zones []string
	// kubeconfig and context name the API server's connection; no
	// kubeconfig: the in-cluster configuration.
	kubeconfig, context string
	// namespace holds the objects and the Lease; "": the configuration's.
	namespace string
	// lease is the Lease's name, "" for the default; leaseDuration how
	// long it holds without renewal.
	lease         string
	leaseDuration time.Duration
	// labels are the Corefile's labels of the objects.
	labels map[string]string
	// setName names the sets of objects beside their zones; "" for none
	// (see setOf).
	setName string
	// properties are the Corefile's providerSpecific properties of the
	// endpoints.
	properties []endpoints.Property
	// where is the directive's file and line, for start-up errors.
	where string
	// block is the server block's first key, with its port (see
	// blockOf): what tells its instances across reloads (carried.go).
	block string

	// ready is set once the API server has the CRD and grants the RBAC,
	// or from the start when an earlier instance of the block was ready
	// (carried.go).
	ready atomic.Bool
	// mu guards cancel and done, the running publication's.
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// zoneSource is what publish reads a zone from: etcdzone.
type zoneSource interface {
	// ServedZones returns the zones etcdzone serves (horizon.Backend): a
	// zone published must be one of them.
	ServedZones() []string
	// Loaded returns the zone as an AXFR would carry it, SOA first, and
	// false while it is not loaded; it counts no transfer.
	Loaded(zone string) ([]dns.RR, bool)
	// Serial returns the zone's serial as Loaded would give it, and false
	// while it has none.
	Serial(zone string) (uint32, bool)
	// Ready reports whether every zone is loaded. Its first true comes
	// after etcdzone's start, which runs after publish's: only then may
	// Serial and Loaded be asked.
	Ready() bool
}

// viewSource is what tells publish that the external view knows what it
// shows the zones at: globaladdr.
type viewSource interface {
	// Settled reports whether the view knows the global addresses and
	// every map's prefix: until then, the zone lacks what they show.
	Settled() bool
	// Tunnel returns the host name, fully qualified, that the view's names
	// with an internal address stand for as CNAMEs; "" for none.
	Tunnel() string
}

// Name implements plugin.Handler.
func (p *Publish) Name() string { return pluginName }

// ServeDNS implements plugin.Handler: publish answers no query.
func (p *Publish) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	return plugin.NextOrFailure(p.Name(), p.Next, ctx, w, r)
}

// Ready implements ready.Readiness: it is ready once the API server has
// answered that the DNSEndpoint CRD is there and the RBAC granted, and
// stays so, across reloads too.
func (p *Publish) Ready() bool { return p.ready.Load() }
