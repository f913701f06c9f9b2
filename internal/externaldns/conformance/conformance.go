// Package conformance checks package externaldns, our imitation of
// external-dns, against a release of external-dns's own coredns provider and
// TXT registry, and so the webhook plugin, run behind the release's webhook
// provider, against both. It names no release itself: the modules in
// test/externaldns/ each pin one and hand it to Run, as modules of their
// own, so that the main module does not take on external-dns's
// dependencies.
package conformance

import (
	"context"
	"slices"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/oracle"
)

// ManagedTypes are the record types the release under test manages (its
// --managed-record-types): every type its coredns provider writes.
var ManagedTypes = []string{"A", "AAAA", "CNAME", "TXT", "PTR"}

// Sync makes the records that external-dns manages in etcd equal to
// records, as one run of its controller does: it reads the current records
// through the TXT registry, plans the changes and applies them.
type Sync func(ctx context.Context, records []externaldns.Record) error

// Release is one release of external-dns.
type Release struct {
	// Format is the format of its TXT registry.
	Format externaldns.Format
	// PTR tells whether its coredns provider writes PTR records.
	PTR bool
	// KeepsOwnership tells whether it leaves the ownership records of
	// the records it deletes (externaldns.DeleteKeepingOwnership).
	KeepsOwnership bool
	// TextsApart tells whether its provider stores each TXT record's text
	// under a key of its own, never beside a host, as the webhook plugin
	// does (plugin/webhook/records): the coredns provider puts a Legacy
	// ownership text into the value of one of the name's hosts, which the
	// etcd plugin then serves, when that host is a name, as a TXT record
	// alone. Run then compares the trees with each text beside a host
	// taken for a key of its own, the only place the two differ.
	TextsApart bool
	// Connect connects its coredns provider (or its webhook provider, to a
	// webhook plugin), with the TXT registry of owner
	// externaldns.DefaultOwner on top, to the etcd at endpoint (records
	// under externaldns.DefaultPrefix), for the rest of the test.
	Connect func(t *testing.T, endpoint string) Sync
}

// Run runs r through steps: the real release writes each step into one
// etcd, package externaldns into another. After each step Run checks that
// both hold the same keys, up to their random labels, with the same values,
// and that a CoreDNS serving what the real release wrote answers each name
// of the step as expected in the internal and in the external view. Then an
// ACME challenge of two values written by UPDATE, one deleted, survives the
// release's syncs. Last, the real release writes oracle.Zone, and the
// external view of what it wrote answers as BIND does (oracle.CheckView).
func Run(t *testing.T, r Release) {
	upstream, imitation := etcdtest.StartT(t), etcdtest.StartT(t)
	sync := r.Connect(t, upstream.Endpoint())
	views := startViews(t, upstream.Endpoint())
	ctx := context.Background()

	var before []externaldns.Record
	for _, s := range steps(r) {
		if !t.Run(s.name, func(t *testing.T) {
			if err := sync(ctx, s.records); err != nil {
				t.Fatalf("external-dns: %v", err)
			}
			imitate(t, imitation, r, before, s.records)
			compareTrees(t, r, upstream, imitation)
			views.check(t, r, before, s.records)
		}) {
			return
		}
		before = s.records
	}
	t.Run("an ACME challenge", func(t *testing.T) {
		views.challenge(t, func() error { return sync(ctx, before) })
	})
	t.Run("BIND's answers", func(t *testing.T) {
		zone := slices.Clone(oracle.Zone)
		for i := range zone {
			zone[i].Format = r.Format
		}
		if err := sync(ctx, zone); err != nil {
			t.Fatalf("external-dns: %v", err)
		}
		oracle.CheckView(t, upstream.Endpoint())
	})
}

// imitate changes what package externaldns wrote for records before into
// what it writes for records after, name by name as the tests do: a name
// whose records changed is deleted as r deletes, then written anew.
func imitate(t *testing.T, s *etcdtest.Server, r Release, before, after []externaldns.Record) {
	t.Helper()
	ctx := context.Background()
	remove := externaldns.Delete
	if r.KeepsOwnership {
		remove = externaldns.DeleteKeepingOwnership
	}
	old, now := byName(before), byName(after)
	for name, records := range old {
		if equalRecords(records, now[name]) {
			continue
		}
		if err := remove(ctx, s.Client(), "", name); err != nil {
			t.Fatal(err)
		}
	}
	for name, records := range now {
		if equalRecords(records, old[name]) {
			continue
		}
		for _, rec := range records {
			if err := externaldns.Put(ctx, s.Client(), "", rec); err != nil {
				t.Fatal(err)
			}
		}
	}
}
