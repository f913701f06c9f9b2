package conformance_test

import (
	"encoding/json"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
)

// This file is compiled against every release under test, as sync_test.go
// is: legacy/wire_test.go is a link to it.

// owned is an ownership record's text, quotes included, as the TXT
// registry writes it.
const owned = `"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app"`

// wireEndpoints returns endpoints with every field the webhook protocol
// carries: labels, a TTL, a set identifier, the exposure mark "true" and
// "false", another property, and a TXT target with its literal quotes.
func wireEndpoints() []*endpoint.Endpoint {
	app := endpoint.NewEndpointWithTTL("app.example.com", "A", 300, "192.168.0.51", "192.168.0.52").
		WithProviderSpecific(horizon.MarkProperty, "true")
	app.Labels[endpoint.ResourceLabelKey] = "ingress/default/app"
	app.Labels[endpoint.OwnerLabelKey] = "default"
	txt := endpoint.NewEndpoint("a-app.example.com", "TXT", owned).
		WithProviderSpecific(horizon.MarkProperty, "false").
		WithProviderSpecific("webhook/other", "x")
	www := endpoint.NewEndpoint("www.example.com", "CNAME", "app.example.com").WithSetIdentifier("eu")
	return []*endpoint.Endpoint{app, txt, www}
}

// roundTrip encodes v as external-dns does, decodes it into into (a type of
// package wire), encodes that as the webhook does and decodes it into back,
// external-dns's type again, and fails t unless back encodes as v did.
func roundTrip(t *testing.T, v, into, back any) {
	t.Helper()
	sent, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sent, into); err != nil {
		t.Fatalf("%s into %T: %v", sent, into, err)
	}
	answer, err := json.Marshal(into)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(answer, back); err != nil {
		t.Fatalf("%s into %T: %v", answer, back, err)
	}
	if again, _ := json.Marshal(back); string(again) != string(sent) {
		t.Errorf("external-dns sent\n\t%s\nand read back\n\t%s\nfrom the webhook's\n\t%s", sent, again, answer)
	}
}

// TestWire checks that the JSON of external-dns's endpoints (GET /records,
// POST /adjustendpoints), change sets (POST /records) and domain filter
// (GET /) decodes into package wire's types, and theirs into external-dns's,
// without loss: the exposure mark "true" and "false" and a TXT target's
// quotes come through as given.
func TestWire(t *testing.T) {
	var eps []*wire.Endpoint
	roundTrip(t, wireEndpoints(), &eps, &[]*endpoint.Endpoint{})
	if len(eps) != 3 {
		t.Fatalf("%d endpoints, want 3", len(eps))
	}
	for i, want := range []string{"true", "false"} {
		if got, ok := eps[i].Property(horizon.MarkProperty); !ok || got != want {
			t.Errorf("%s: the mark is %q (%v), want %q", eps[i].DNSName, got, ok, want)
		}
	}
	if eps[1].Targets[0] != owned {
		t.Errorf("the TXT target is %s, want %s", eps[1].Targets[0], owned)
	}

	changes := &plan.Changes{Create: wireEndpoints(), UpdateOld: wireEndpoints(), UpdateNew: wireEndpoints(), Delete: wireEndpoints()}
	var ch wire.Changes
	roundTrip(t, changes, &ch, &plan.Changes{})
	for _, part := range [][]*wire.Endpoint{ch.Create, ch.UpdateOld, ch.UpdateNew, ch.Delete} {
		if len(part) != 3 {
			t.Errorf("a part of the change set has %d endpoints, want 3: %+v", len(part), ch)
		}
	}

	var df wire.DomainFilter
	roundTrip(t, endpoint.NewDomainFilter([]string{"example.com", "168.192.in-addr.arpa"}), &df, &endpoint.DomainFilter{})
	if len(df.Include) != 2 {
		t.Errorf("the domain filter includes %v, want both zones", df.Include)
	}
}
