package publish

import (
	"github.com/coredns/coredns/plugin"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	leader = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "leader",
		Help:      "1 while this replica holds the Lease and writes the DNSEndpoint objects, else 0, by Lease: two blocks on one address have one each.",
	}, []string{"server", "lease"})
	objectCount = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "objects",
		Help:      "Number of DNSEndpoint objects the zone was last published in.",
	}, []string{"server", "zone"})
	endpointCount = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "endpoints",
		Help:      "Number of endpoints (record sets) the zone was last published with.",
	}, []string{"server", "zone"})
	publishedSerial = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "serial",
		Help:      "Serial of the zone as last published.",
	}, []string{"server", "zone"})
	skippedRecords = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "skipped_records",
		Help:      "Records of the zone as last published that external-dns can't carry (DNSSEC's among them), by type.",
	}, []string{"server", "zone", "type"})
	writes = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "writes_total",
		Help:      "Counter of DNSEndpoint objects written, by operation (create, update, delete).",
	}, []string{"server", "zone", "op"})
	publishErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "errors_total",
		Help:      "Counter of publications of the zone that failed (they are tried again).",
	}, []string{"server", "zone"})
)

// forgetPublished drops the series of what r's replica published: once it
// stops writing, they would describe another replica's objects.
func (r *run) forgetPublished() {
	for _, g := range []*prometheus.GaugeVec{objectCount, endpointCount, publishedSerial, skippedRecords} {
		r.forget(g, prometheus.Labels{})
	}
}

// set sets g to v under each of the block's server labels, followed by
// labels.
func (r *run) set(g *prometheus.GaugeVec, v float64, labels ...string) {
	for _, server := range r.servers {
		g.WithLabelValues(append([]string{server}, labels...)...).Set(v)
	}
}

// add adds v to c under each of the block's server labels, followed by
// labels.
func (r *run) add(c *prometheus.CounterVec, v float64, labels ...string) {
	for _, server := range r.servers {
		c.WithLabelValues(append([]string{server}, labels...)...).Add(v)
	}
}

// forget drops g's series of each of the block's server labels that match
// labels too.
func (r *run) forget(g *prometheus.GaugeVec, labels prometheus.Labels) {
	for _, server := range r.servers {
		match := prometheus.Labels{"server": server}
		for k, v := range labels {
			match[k] = v
		}
		g.DeletePartialMatch(match)
	}
}
