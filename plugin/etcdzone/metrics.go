package etcdzone

import (
	"github.com/coredns/coredns/plugin"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/hosted"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The metrics of each zone, labelled with each of the server block's
// addresses (package serverlabel) and the zone.
var (
	loadedGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "loaded",
		Help:      "0 from start-up until the zone is loaded from etcd (its queries get SERVFAIL meanwhile), then 1.",
	}, []string{"server", "zone"})

	recordsGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "records",
		Help:      "Records the zone holds, the apex's SOA and NS records aside.",
	}, []string{"server", "zone"})

	serialGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "serial",
		Help:      "The zone's SOA serial.",
	}, []string{"server", "zone"})

	skippedKeys = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "skipped_keys_total",
		Help:      "Counter of etcd keys left out of the zone because their value holds no record it can serve.",
	}, []string{"server", "zone"})

	etcdErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "etcd_errors_total",
		Help:      "Counter of failed reads and watches of the zone's keys in etcd (each retry counts), and of the seconds the zone has heard nothing from etcd for 10 s or more.",
	}, []string{"server", "zone"})

	sinceContact = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "etcd_silence_seconds",
		Help:      "Seconds since the zone's connection last heard from etcd (an answer, an event, a progress report); above 10 while it is cut off from every member.",
	}, []string{"server", "zone"})

	transferredSerial = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "transferred_serial",
		Help:      "The serial of the zone the last transfer (AXFR, or IXFR up to date or not) was answered with; behind coredns_etcdzone_serial while the secondaries have not fetched the zone.",
	}, []string{"server", "zone"})

	transfers = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "transfers_total",
		Help:      "Counter of transfers of the zone that sent records, by type: axfr (the whole zone), or ixfr (the changes since the secondary's serial, from the journal).",
	}, []string{"server", "zone", "type"})

	transferErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "transfer_errors_total",
		Help:      "Counter of transfers of the zone that could not be served (the zone not loaded yet).",
	}, []string{"server", "zone"})

	updates = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "updates_total",
		Help:      "Counter of RFC 2136 UPDATEs of the zone, by result: applied, or why they were refused (disabled, unsigned, denied, notauth, malformed, prerequisite, error).",
	}, []string{"server", "zone", "result"})

	notifyErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "notify_errors_total",
		Help:      "Counter of NOTIFYs for the zone that a secondary did not acknowledge.",
	}, []string{"server", "zone"})
	signaturesExpiry = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "signatures_expiry_timestamp_seconds",
		Help:      "When the first of a signed zone's signatures expires (Unix time): refreshed well before, it stays about dnssec_validity less dnssec_refresh ahead.",
	}, []string{"server", "zone"})
)

// series are the labels of one zone's series: each of the block's server
// labels, and the zone's name.
type series struct {
	servers []string
	zone    string
}

// set sets g, a gauge of the zone's, to v under each of the block's server
// labels.
func (s series) set(g *prometheus.GaugeVec, v float64) {
	for _, server := range s.servers {
		g.WithLabelValues(server, s.zone).Set(v)
	}
}

// inc adds one to c, a counter of the zone's with the labels after the
// zone's, under each of the block's server labels.
func (s series) inc(c *prometheus.CounterVec, labels ...string) {
	for _, server := range s.servers {
		c.WithLabelValues(append([]string{server, s.zone}, labels...)...).Inc()
	}
}

var _ hosted.Meter = series{}

// Loaded implements hosted.Meter.
func (s series) Loaded(loaded bool) {
	v := 0.0
	if loaded {
		v = 1
	}
	s.set(loadedGauge, v)
}

// Records implements hosted.Meter.
func (s series) Records(n int) { s.set(recordsGauge, float64(n)) }

// Serial implements hosted.Meter.
func (s series) Serial(serial uint32) { s.set(serialGauge, float64(serial)) }

// Skipped implements hosted.Meter.
func (s series) Skipped() { s.inc(skippedKeys) }

// Failed implements hosted.Meter.
func (s series) Failed() { s.inc(etcdErrors) }

// SignaturesExpire implements hosted.Meter.
func (s series) SignaturesExpire(unix int64) { s.set(signaturesExpiry, float64(unix)) }
