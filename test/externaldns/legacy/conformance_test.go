package conformance_test

import (
	"testing"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/externaldns/conformance"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/provider/coredns"
	"sigs.k8s.io/external-dns/registry"
)

// TestConformance checks package externaldns against external-dns v0.14.2
// (go.mod pins it), whose TXT registry writes the legacy format, as every
// release from v0.13.0 to v0.17 does with the same coredns provider code.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Release{Format: externaldns.Legacy, Connect: connect})
}

// connect connects external-dns's coredns provider and TXT registry to the
// etcd at etcdURL, configured as its flags --provider=coredns
// --managed-record-types=... and the environment variable ETCD_URLS do.
func connect(t *testing.T, etcdURL string) conformance.Sync {
	t.Setenv("ETCD_URLS", etcdURL)
	p, err := coredns.NewCoreDNSProvider(endpoint.NewDomainFilter(nil), externaldns.DefaultPrefix, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := registry.NewTXTRegistry(p, "", "", externaldns.DefaultOwner, 0, "", conformance.ManagedTypes, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return syncer(r)
}
