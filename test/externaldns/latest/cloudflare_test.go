package conformance_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"
	published "github.com/globaladdr/globaladdr/plugin/publish/endpoints"

	"github.com/miekg/dns"
	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/source/annotations"
)

// TestCloudflareProxied checks the properties docs/tunnel.md gives publish
// against this release's Cloudflare path, as the second external-dns
// (--source=crd --provider=cloudflare) runs it: what its sources'
// post-processor does to each endpoint for Cloudflare (it renames the
// legacy property and keeps no other provider's), then the plan. For each
// form of the property, the canonical, the legacy, and both (what the
// chart's publish values give), the CNAME to the tunnel is to be created
// with annotations.CloudflareProxiedProperty "true", the property the
// Cloudflare provider's shouldBeProxied reads, and the name with an
// address without it. (The post-processor's package and the provider are
// not compiled here: they import every source of external-dns and
// cloudflare-go, which alone took 9 CPU-minutes to compile. The provider's
// AdjustEndpoints, run by hand on these endpoints through the
// post-processor, makes the CNAME proxied with the automatic TTL and the A
// not proxied.)
func TestCloudflareProxied(t *testing.T) {
	const tunnel = "relay.example.net."
	zone := []dns.RR{
		test.CNAME("app.example.com. 900 IN CNAME " + tunnel),
		test.A("www.example.com. 300 IN A 198.51.100.80"),
	}
	for _, tc := range []struct {
		name  string
		props []published.Property
	}{
		{"canonical", []published.Property{{Name: "cloudflare/proxied", Value: "true", Tunnelled: true}}},
		{"legacy", []published.Property{{Name: "external-dns.alpha.kubernetes.io/cloudflare-proxied", Value: "true", Tunnelled: true}}},
		{"both", []published.Property{
			{Name: "cloudflare/proxied", Value: "true", Tunnelled: true},
			{Name: "external-dns.alpha.kubernetes.io/cloudflare-proxied", Value: "true", Tunnelled: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps, _ := published.FromZone("example.com.", zone)
			published.AddProperties(eps, tc.props, tunnel)
			var desired []*endpoint.Endpoint
			data, err := json.Marshal(eps)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &desired); err != nil {
				t.Fatal(err)
			}
			for _, e := range desired {
				annotations.NormalizeProviderSpecific(e)
				e.RetainProviderProperties("cloudflare")
			}
			filter := endpoint.NewDomainFilter([]string{"example.com"})
			changes := (&plan.Plan{
				Desired:        desired,
				DomainFilter:   endpoint.MatchAllDomainFilters{filter},
				ManagedRecords: []string{endpoint.RecordTypeA, endpoint.RecordTypeAAAA, endpoint.RecordTypeCNAME},
			}).Calculate().Changes
			var got []string
			for _, e := range changes.Create {
				var props []string
				for _, p := range e.ProviderSpecific {
					props = append(props, p.Name+"="+p.Value)
				}
				got = append(got, strings.Join(append([]string{e.DNSName, e.RecordType, e.Targets.String(), strconv.FormatInt(int64(e.RecordTTL), 10)}, props...), " "))
			}
			slices.Sort(got)
			want := []string{
				"app.example.com CNAME relay.example.net 900 " + annotations.CloudflareProxiedProperty + "=true",
				"www.example.com A 198.51.100.80 300",
			}
			if !slices.Equal(got, want) {
				t.Errorf("external-dns plans to create\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}
