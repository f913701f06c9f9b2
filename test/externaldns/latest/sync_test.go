package conformance_test

import (
	"context"

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
		current, err := reg.Records(ctx)
		if err != nil {
			return err
		}
		var desired []*endpoint.Endpoint
		for _, r := range records {
			ep := endpoint.NewEndpointWithTTL(r.Name, r.Type, endpoint.TTL(r.TTL), r.Targets...)
			ep.Labels[endpoint.ResourceLabelKey] = r.Resource
			desired = append(desired, ep)
		}
		if desired, err = reg.AdjustEndpoints(desired); err != nil {
			return err
		}
		p := (&plan.Plan{
			Policies:       []plan.Policy{&plan.SyncPolicy{}},
			Current:        current,
			Desired:        desired,
			ManagedRecords: conformance.ManagedTypes,
			OwnerID:        reg.OwnerID(),
		}).Calculate()
		if !p.Changes.HasChanges() {
			return nil
		}
		return reg.ApplyChanges(ctx, p.Changes)
	}
}
