package conformance_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/externaldns/conformance"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	clientv3 "go.etcd.io/etcd/client/v3"
	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/registry"
)

// This file is compiled against every release under test, as sync_test.go
// is: legacy/webhook_test.go is a link to it. Each release's
// conformance_test.go gives release, coreDNSRegistry and webhookRegistry.

// webhookCorefile runs the webhook plugin for the zones of the conformance
// steps, its API on {httpport:webhook}, writing into the etcd at ETCD. The
// block answers no DNS question: it listens on loopback.
const webhookCorefile = `example.com:{port:webhookdns} 168.192.in-addr.arpa:{port:webhookdns} {
	bind 127.0.0.1
	webhook 127.0.0.1:{httpport:webhook} {
		endpoint ETCD
	}
}
`

// startWebhook starts a CoreDNS serving webhookCorefile for the etcd at
// etcdURL, and returns the base URL of its webhook API, external-dns's
// --webhook-provider-url.
func startWebhook(t *testing.T, etcdURL string) string {
	c := corednstest.Start(t, strings.ReplaceAll(webhookCorefile, "ETCD", etcdURL))
	return "http://" + c.Addr("webhook")
}

// TestWebhookConformance runs the conformance steps through release's
// webhook provider and TXT registry, connected to the webhook plugin: the
// plugin writes the keys and values package externaldns writes (and so
// release's coredns provider: TestConformance), up to the place of a text
// (Release.TextsApart), and the views serve them alike. Unlike the coredns
// provider of v0.22.0 and later, the plugin deletes the ownership records the TXT
// registry deletes.
func TestWebhookConformance(t *testing.T) {
	r := release
	r.Connect = func(t *testing.T, etcdURL string) conformance.Sync {
		return syncer(webhookRegistry(t, startWebhook(t, etcdURL)))
	}
	r.KeepsOwnership = false
	r.TextsApart = true
	conformance.Run(t, r)
}

// marked returns the records of conformance.Created as a source hands them
// to the controller, with properties from the annotations
// external-dns.kubernetes.io/webhook-*: app's addresses marked exposed,
// shop's withheld, www marked exposed with a property the webhook does not
// keep, short with that property alone.
func marked() []*endpoint.Endpoint {
	eps := endpoints(conformance.Created(release))
	for _, ep := range eps {
		switch ep.DNSName {
		case "app.example.com":
			ep.WithProviderSpecific(horizon.MarkProperty, "true")
		case "shop.example.com":
			ep.WithProviderSpecific(horizon.MarkProperty, "false")
		case "www.example.com":
			ep.WithProviderSpecific(horizon.MarkProperty, "true").WithProviderSpecific("webhook/other", "x")
		case "short.example.com":
			ep.WithProviderSpecific("webhook/other", "x")
		}
	}
	return eps
}

// TestWebhookNoChurn checks that once release has synced endpoints with
// properties through the webhook, the exposure mark "true" and "false" and
// a property the webhook does not keep, the next sync of the same endpoints
// plans no change and writes nothing: the webhook reads the mark back as it
// was given, and its /adjustendpoints drops the other property, which it
// would not read back, before the controller plans (without that, the plan
// would update the names that have it at every sync).
func TestWebhookNoChurn(t *testing.T) {
	ctx := context.Background()
	etcd := etcdtest.StartT(t)
	reg := webhookRegistry(t, startWebhook(t, etcd.Endpoint()))
	if changes, err := runOnce(ctx, reg, marked()); err != nil || changes == nil {
		t.Fatalf("the first sync: %v, changes %v", err, changes)
	}
	rev := revision(t, etcd)
	for _, want := range []string{`"globaladdr-external":"true"`, `"globaladdr-external":"false"`} {
		if !strings.Contains(dump(t, etcd), want) {
			t.Errorf("no value holds %s:\n%s", want, dump(t, etcd))
		}
	}
	if strings.Contains(dump(t, etcd), "other") {
		t.Errorf("webhook/other was stored:\n%s", dump(t, etcd))
	}

	if changes, err := runOnce(ctx, reg, marked()); err != nil || changes != nil {
		t.Errorf("the second sync: %v, changes %s", err, describe(changes))
	}
	if got := revision(t, etcd); got != rev {
		t.Errorf("the second sync wrote: revision %d, was %d", got, rev)
	}

	current, err := reg.Records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unadjusted := calculate(reg, current, marked())
	var updated []string
	for _, ep := range unadjusted.UpdateNew {
		updated = append(updated, ep.DNSName)
	}
	slices.Sort(updated)
	if len(unadjusted.Create)+len(unadjusted.Delete) > 0 || !slices.Equal(updated, []string{"short.example.com", "www.example.com"}) {
		t.Errorf("a plan of the endpoints not adjusted: %s; want updates of www and short alone, which have webhook/other", describe(unadjusted))
	}
}

// TestWebhookApex checks that release's TXT registry owns a record at the
// apex of the webhook's zone, whose ownership record (Current: a-example.com)
// lies outside the zone: a change of the record's address reaches etcd.
func TestWebhookApex(t *testing.T) {
	ctx := context.Background()
	etcd := etcdtest.StartT(t)
	reg := webhookRegistry(t, startWebhook(t, etcd.Endpoint()))
	apex := func(address string) []*endpoint.Endpoint {
		return endpoints([]externaldns.Record{{Name: "example.com", Type: "A", Targets: []string{address}, Resource: "ingress/default/apex"}})
	}
	for _, address := range []string{"192.168.0.50", "192.168.0.51"} {
		if changes, err := runOnce(ctx, reg, apex(address)); err != nil || changes == nil {
			t.Fatalf("the sync of %s: %v, changes %s", address, err, describe(changes))
		}
	}
	if tree := dump(t, etcd); strings.Contains(tree, "192.168.0.50") || !strings.Contains(tree, "192.168.0.51") {
		t.Errorf("the apex's address did not change:\n%s", tree)
	}
}

// TestWebhookMigration checks that a tree release's coredns provider wrote
// is the webhook's as it stands: after the provider synced migrated's
// records, the webhook provider's sync of the same records writes nothing to
// etcd, nor does the coredns provider's again. For a release of the Current
// format, the other way round too. A Legacy tree the webhook wrote is no
// tree for the coredns provider to take back: the webhook keeps an
// ownership text under a key of its own below the name, and when that key sorts
// before the name's hosts, the provider's Records put the hosts into the TXT
// endpoint (see migrated), so that the provider writes the record again.
func TestWebhookMigration(t *testing.T) {
	ctx := context.Background()
	froms := []string{"coredns"}
	if release.Format != externaldns.Legacy {
		froms = append(froms, "webhook")
	}
	for _, from := range froms {
		t.Run("from the "+from+" provider's tree", func(t *testing.T) {
			etcd := etcdtest.StartT(t)
			regs := map[string]registry.Registry{
				"coredns": coreDNSRegistry(t, etcd.Endpoint()),
				"webhook": webhookRegistry(t, startWebhook(t, etcd.Endpoint())),
			}
			to := map[string]string{"coredns": "webhook", "webhook": "coredns"}[from]
			if changes, err := runOnce(ctx, regs[from], migrated()); err != nil || changes == nil {
				t.Fatalf("the %s provider's sync: %v, changes %v", from, err, changes)
			}
			rev := revision(t, etcd)
			for _, next := range []string{to, from} {
				changes, err := runOnce(ctx, regs[next], migrated())
				if err != nil || changes != nil {
					t.Errorf("then the %s provider's sync: %v, changes %s", next, err, describe(changes))
				}
				if got := revision(t, etcd); got != rev {
					t.Errorf("then the %s provider's sync wrote: revision %d, was %d\n%s", next, got, rev, dump(t, etcd))
				}
			}
		})
	}
}

// migrated returns the records of conformance.Created that the coredns
// provider reads back as it wrote them, as a source hands them to the
// controller: all but app's AAAA record. Its Records put the targets of all
// the keys of a name into one endpoint, of the type of the first, so it
// rewrites a name with A and AAAA records at each of its own syncs.
func migrated() []*endpoint.Endpoint {
	return slices.DeleteFunc(endpoints(conformance.Created(release)), func(ep *endpoint.Endpoint) bool {
		return ep.DNSName == "app.example.com" && ep.RecordType == endpoint.RecordTypeAAAA
	})
}

// revision returns the etcd revision of s.
func revision(t *testing.T, s *etcdtest.Server) int64 {
	t.Helper()
	resp, err := s.Client().Get(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// dump returns the keys and values of s below the prefix, a line each.
func dump(t *testing.T, s *etcdtest.Server) string {
	t.Helper()
	resp, err := s.Client().Get(context.Background(), externaldns.DefaultPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, kv := range resp.Kvs {
		b.WriteString(string(kv.Key) + " = " + string(kv.Value) + "\n")
	}
	return b.String()
}

// describe returns changes as "create|updateOld|updateNew|delete name type
// targets properties", one per endpoint, for errors.
func describe(changes *plan.Changes) string {
	if changes == nil {
		return "none"
	}
	var lines []string
	for _, part := range []struct {
		what string
		eps  []*endpoint.Endpoint
	}{{"create", changes.Create}, {"updateOld", changes.UpdateOld}, {"updateNew", changes.UpdateNew}, {"delete", changes.Delete}} {
		for _, ep := range part.eps {
			lines = append(lines, part.what+" "+ep.String())
		}
	}
	return strings.Join(lines, "; ")
}
