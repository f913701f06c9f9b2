package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/externaldns/conformance"

	"sigs.k8s.io/external-dns/endpoint"
	config "sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/coredns"
	"sigs.k8s.io/external-dns/provider/webhook"
	"sigs.k8s.io/external-dns/registry"
	"sigs.k8s.io/external-dns/registry/txt"
)

// release is external-dns v0.23.0 (go.mod pins it), which needs Go 1.27:
// make externaldns runs this module with GOTOOLCHAIN=go1.27.3. Its coredns
// provider is v0.22.0's, PTR records at the exact key of their reverse name
// included (kubernetes-sigs/external-dns#6478, in v0.22.0 already).
var release = conformance.Release{Format: externaldns.Current, PTR: true, KeepsOwnership: true}

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
	cfg := flags()
	p, err := coredns.New(context.Background(), cfg, endpoint.NewDomainFilter(nil))
	if err != nil {
		t.Fatal(err)
	}
	return txtRegistry(t, cfg, p)
}

// webhookRegistry returns external-dns's webhook provider, with the TXT
// registry on top, connected to the webhook at url, configured as its flags
// --provider=webhook --webhook-provider-url=url do, with the default
// timeouts. It fails t unless the webhook answers the negotiation.
func webhookRegistry(t *testing.T, url string) registry.Registry {
	cfg := flags()
	cfg.WebhookProviderURL = url
	cfg.WebhookProviderReadTimeout, cfg.WebhookProviderWriteTimeout = 5*time.Second, 10*time.Second
	p, err := webhook.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return txtRegistry(t, cfg, p)
}

// flags is the configuration the flags the registries share give:
// --coredns-prefix, --txt-owner-id and --managed-record-types.
func flags() *config.Config {
	return &config.Config{
		CoreDNSPrefix:         externaldns.DefaultPrefix,
		TXTOwnerID:            externaldns.DefaultOwner,
		ManagedDNSRecordTypes: conformance.ManagedTypes,
	}
}

// txtRegistry returns the TXT registry of cfg on top of p.
func txtRegistry(t *testing.T, cfg *config.Config, p provider.Provider) registry.Registry {
	r, err := txt.New(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
