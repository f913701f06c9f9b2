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
	leader.WithLabelValues(r.server).Set(1)
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
				publishErrors.WithLabelValues(r.server, z).Inc()
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

// publish makes the objects of zone hold the zone as etcdzone transfers it
// now, and returns the serial it published.
func (r *run) publish(ctx context.Context, zone string) (uint32, error) {
	ch, err := r.src.Transfer(zone, 0)
	if err != nil {
		return 0, fmt.Errorf("reading the zone: %w", err)
	}
	var rrs []dns.RR
	for batch := range ch {
		rrs = append(rrs, batch...)
	}
	if len(rrs) == 0 {
		return 0, fmt.Errorf("reading the zone: nothing came")
	}
	soa, ok := rrs[0].(*dns.SOA)
	if !ok {
		return 0, fmt.Errorf("reading the zone: it does not begin with its SOA")
	}
	eps, skipped := endpoints.FromZone(zone, rrs)
	want := map[string][]wire.Endpoint{}
	parts := endpoints.Split(eps, objectBudget)
	for i, part := range parts {
		want[objectName(zone, r.port, i)] = part
	}
	selector := labelsOf(zone, r.block)
	all := maps.Clone(r.labels)
	maps.Copy(all, selector)
	set := objects.Set{Client: r.dyn, Namespace: r.namespace, Selector: selector, Labels: all}
	w, err := set.Apply(ctx, want)
	writes.WithLabelValues(r.server, zone, "create").Add(float64(w.Created))
	writes.WithLabelValues(r.server, zone, "update").Add(float64(w.Updated))
	writes.WithLabelValues(r.server, zone, "delete").Add(float64(w.Deleted))
	if err != nil {
		return 0, err
	}
	objectCount.WithLabelValues(r.server, zone).Set(float64(len(parts)))
	endpointCount.WithLabelValues(r.server, zone).Set(float64(len(eps)))
	publishedSerial.WithLabelValues(r.server, zone).Set(float64(soa.Serial))
	skippedRecords.DeletePartialMatch(map[string]string{"server": r.server, "zone": zone})
	for t, n := range skipped {
		skippedRecords.WithLabelValues(r.server, zone, dns.TypeToString[t]).Set(float64(n))
	}
	if w != (objects.Writes{}) {
		log.Infof("zone %s, serial %d: %d endpoints in %d objects of namespace %s (%d created, %d updated, %d deleted)",
			zone, soa.Serial, len(eps), len(parts), r.namespace, w.Created, w.Updated, w.Deleted)
	}
	return soa.Serial, nil
}
