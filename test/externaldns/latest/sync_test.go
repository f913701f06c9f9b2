package conformance_test

import (
	"context"
	"slices"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/externaldns/conformance"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	"sigs.k8s.io/external-dns/registry"
)

// syncer returns what one run of external-dns's controller with reg does,
// with the sources' records as desired state and the sync policy.
//
// This file is compiled against every release under test: legacy/sync_test.go
// is a link to it.
func syncer(reg registry.Registry) conformance.Sync {
	return func(ctx context.Context, records []externaldns.Record) error {
		_, err := runOnce(ctx, reg, endpoints(records))
		return err
	}
}

// endpoints returns records as a source hands them to the controller.
func endpoints(records []externaldns.Record) []*endpoint.Endpoint {
	var eps []*endpoint.Endpoint
	for _, r := range records {
		ep := endpoint.NewEndpointWithTTL(r.Name, r.Type, endpoint.TTL(r.TTL), r.Targets...)
		ep.Labels[endpoint.ResourceLabelKey] = r.Resource
		eps = append(eps, ep)
	}
	return eps
}

// runOnce is one run of external-dns's controller with reg (its RunOnce),
// desired the sources' endpoints: it reads the current records, has the
// provider adjust desired, plans with the sync policy and applies the plan's
// changes, which it returns; nil when it planned none.
func runOnce(ctx context.Context, reg registry.Registry, desired []*endpoint.Endpoint) (*plan.Changes, error) {
	current, err := reg.Records(ctx)
	if err != nil {
		return nil, err
	}
	if desired, err = reg.AdjustEndpoints(desired); err != nil {
		return nil, err
	}
	changes := calculate(reg, current, desired)
	if !changes.HasChanges() {
		return nil, nil
	}
	return changes, reg.ApplyChanges(ctx, changes)
}

// calculate returns the changes the controller plans to make current
// desired. The plan sees only the names of the provider's domain filter (for
// the webhook provider, what the webhook answered at the negotiation), as
// the controller's has it, with no --domain-filter of its own.
func calculate(reg registry.Registry, current, desired []*endpoint.Endpoint) *plan.Changes {
	filter := reg.GetDomainFilter()
	outside := func(ep *endpoint.Endpoint) bool { return !filter.Match(ep.DNSName) }
	return (&plan.Plan{
		Policies:       []plan.Policy{&plan.SyncPolicy{}},
		Current:        slices.DeleteFunc(current, outside),
		Desired:        slices.DeleteFunc(desired, outside),
		ManagedRecords: conformance.ManagedTypes,
		OwnerID:        reg.OwnerID(),
	}).Calculate().Changes
}
