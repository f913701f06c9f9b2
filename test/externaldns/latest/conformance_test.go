package conformance_test

import (
	"context"
	"testing"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/externaldns/conformance"

	"sigs.k8s.io/external-dns/endpoint"
	config "sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/provider/coredns"
	"sigs.k8s.io/external-dns/registry/txt"
)

// TestConformance checks package externaldns against external-dns v0.22.0
// (go.mod pins it), the newest release that builds with the project's Go
// 1.26: v0.23.0 needs Go 1.27, and its coredns provider and TXT registry
// are v0.22.0's.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Release{Format: externaldns.Current, PTR: true, KeepsOwnership: true, Connect: connect})
}

// connect connects external-dns's coredns provider and TXT registry to the
// etcd at etcdURL, configured as its flags --provider=coredns
// --managed-record-types=... and the environment variable ETCD_URLS do.
func connect(t *testing.T, etcdURL string) conformance.Sync {
	t.Setenv("ETCD_URLS", etcdURL)
	cfg := &config.Config{
		CoreDNSPrefix:         externaldns.DefaultPrefix,
		TXTOwnerID:            externaldns.DefaultOwner,
		ManagedDNSRecordTypes: conformance.ManagedTypes,
	}
	p, err := coredns.New(context.Background(), cfg, endpoint.NewDomainFilter(nil))
	if err != nil {
		t.Fatal(err)
	}
	r, err := txt.New(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return syncer(r)
}
