package conformance_test

import (
	"testing"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/externaldns/conformance"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/coredns"
	"sigs.k8s.io/external-dns/provider/webhook"
	"sigs.k8s.io/external-dns/registry"
)

// release is external-dns v0.14.2 (go.mod pins it), whose TXT registry
// writes the legacy format, as every release from v0.13.0 to v0.17 does with
// the same coredns provider code; v0.14.0 brought the webhook provider, and
// v0.14.2 is the oldest release the webhook plugin serves.
var release = conformance.Release{Format: externaldns.Legacy}

// TestConformance checks package externaldns against release's coredns
// provider and TXT registry.
func TestConformance(t *testing.T) {
	r := release
	r.Connect = func(t *testing.T, etcdURL string) conformance.Sync { return syncer(coreDNSRegistry(t, etcdURL)) }
	conformance.Run(t, r)
}

// coreDNSRegistry returns external-dns's coredns provider, with the TXT
// registry on top, connected to the etcd at etcdURL, configured as its flags
// --provider=coredns --managed-record-types=... and the environment variable
// ETCD_URLS do.
func coreDNSRegistry(t *testing.T, etcdURL string) registry.Registry {
	t.Setenv("ETCD_URLS", etcdURL)
	p, err := coredns.NewCoreDNSProvider(endpoint.NewDomainFilter(nil), externaldns.DefaultPrefix, false)
	if err != nil {
		t.Fatal(err)
	}
	return txtRegistry(t, p)
}

// webhookRegistry returns external-dns's webhook provider, with the TXT
// registry on top, connected to the webhook at url, configured as its flags
// --provider=webhook --webhook-provider-url=url do. It fails t unless the
// webhook answers the negotiation.
func webhookRegistry(t *testing.T, url string) registry.Registry {
	p, err := webhook.NewWebhookProvider(url)
	if err != nil {
		t.Fatal(err)
	}
	return txtRegistry(t, p)
}

// txtRegistry returns the TXT registry of --txt-owner-id and
// --managed-record-types on top of p.
func txtRegistry(t *testing.T, p provider.Provider) registry.Registry {
	r, err := registry.NewTXTRegistry(p, "", "", externaldns.DefaultOwner, 0, "", conformance.ManagedTypes, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
