package publish

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/publish/endpoints"
	"github.com/globaladdr/globaladdr/plugin/publish/objects"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	// pollEvery is how often the writing replica looks at the zones'
	// serials: a new one is published within it.
	pollEvery = 500 * time.Millisecond
	// resyncEvery is how often it compares the objects with the zones
	// though no serial moved, undoing what others wrote into them.
	resyncEvery = time.Minute
	// firstRetry and lastRetry bound the wait before a failed
	// publication is tried again; it doubles at each failure.
	firstRetry, lastRetry = time.Second, 30 * time.Second
	// objectBudget bounds the endpoints' JSON in one object: a third of
	// etcd's default request limit (1.5 MiB), the rest for the object's
	// metadata and the status external-dns writes.
	objectBudget = 512 << 10
)

// lead publishes the zones while this replica holds the Lease, until ctx
// ends with it: each zone when its serial moves, every zone each
// resyncEvery, and a zone that failed after a wait growing from firstRetry
// to lastRetry. A zone not loaded yet is not published: an empty zone
// would delete every name of the objects.
func (r *run) lead(ctx context.Context) {
	r.set(leader, 1, r.leaseName)
	log.Infof("holding Lease %s: this replica writes", r.leaseName)
	published := map[string]uint32{}
	retry := map[string]time.Duration{}
	retryAt := map[string]time.Time{}
	resync := time.Now().Add(resyncEvery)
	for {
		if time.Now().After(resync) {
			clear(published)
			resync = time.Now().Add(resyncEvery)
		}
		for _, z := range r.zones {
			serial, ok := r.src.Serial(z)
			if s, done := published[z]; !ok || done && s == serial || time.Now().Before(retryAt[z]) {
				continue
			}
			s, err := r.publish(ctx, z)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				retry[z] = min(max(2*retry[z], firstRetry), lastRetry)
				retryAt[z] = time.Now().Add(retry[z])
				r.add(publishErrors, 1, z)
				log.Warningf("zone %s: %v; trying again in %s", z, err, retry[z])
				continue
			}
			published[z] = s
			delete(retry, z)
			delete(retryAt, z)
		}
		if !wait.For(ctx, pollEvery) {
			return
		}
	}
}

// publish makes the objects of zone hold the zone as etcdzone would
// transfer it now, and returns the serial it published.
func (r *run) publish(ctx context.Context, zone string) (uint32, error) {
	rrs, ok := r.src.Loaded(zone)
	if !ok || len(rrs) == 0 {
		return 0, fmt.Errorf("reading the zone: it is not loaded")
	}
	soa, ok := rrs[0].(*dns.SOA)
	if !ok {
		return 0, fmt.Errorf("reading the zone: it does not begin with its SOA")
	}
	eps, skipped := endpoints.FromZone(zone, rrs)
	endpoints.AddProperties(eps, r.properties, r.view.Tunnel())
	want := map[string][]wire.Endpoint{}
	parts := endpoints.Split(eps, objectBudget)
	name := setOf(zone, r.setName)
	for i, part := range parts {
		want[objectName(name, i)] = part
	}
	selector := labelsOf(name, zone)
	all := maps.Clone(r.labels)
	maps.Copy(all, selector)
	set := objects.Set{Client: r.dyn, Namespace: r.namespace, Selector: selector, Labels: all}
	w, err := set.Apply(ctx, want)
	if err == nil {
		// The objects of an older release, named for the block's port:
		// at every publication, for one that still runs beside this one
		// in a rollout writes them until it stops. Its writes may make a
		// delete conflict: that is tried again at the next publication,
		// and fails none, since the set itself is written.
		oldSelector, old := oldSet(zone)
		retired, rerr := set.Retire(ctx, oldSelector, old)
		w.Deleted += retired
		if rerr != nil && ctx.Err() == nil {
			log.Warningf("zone %s: deleting the objects of an older release: %v; trying again at the next publication", zone, rerr)
		}
	}
	r.add(writes, float64(w.Created), zone, "create")
	r.add(writes, float64(w.Updated), zone, "update")
	r.add(writes, float64(w.Deleted), zone, "delete")
	if err != nil {
		return 0, err
	}
	r.set(objectCount, float64(len(parts)), zone)
	r.set(endpointCount, float64(len(eps)), zone)
	r.set(publishedSerial, float64(soa.Serial), zone)
	r.forget(skippedRecords, prometheus.Labels{"zone": zone})
	for t, n := range skipped {
		r.set(skippedRecords, float64(n), zone, dns.TypeToString[t])
	}
	if w != (objects.Writes{}) {
		log.Infof("zone %s, serial %d: %d endpoints in %d objects of namespace %s (%d created, %d updated, %d deleted)",
			zone, soa.Serial, len(eps), len(parts), r.namespace, w.Created, w.Updated, w.Deleted)
	}
	return soa.Serial, nil
}
