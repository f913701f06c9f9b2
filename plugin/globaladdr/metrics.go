package globaladdr

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	rewrittenCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "rewritten_total",
		Help:      "Counter of internal A and AAAA records replaced by a global address.",
	}, []string{"server", "type"})

	droppedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "dropped_total",
		Help:      "Counter of records removed from external answers: internal addresses without a global address of their family (A, AAAA), and ownership records (TXT).",
	}, []string{"server", "type"})

	hiddenCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "hidden_total",
		Help:      "Counter of hidden names answered NXDOMAIN and of records removed because they name a hidden name.",
	}, []string{"server"})

	sourceErrorCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "source_errors_total",
		Help:      "Counter of from sources turning unusable: unreadable, missing, or holding a value that is not a list of global addresses.",
	}, []string{"server", "source"})

	addressCount = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "addresses",
		Help:      "Number of global addresses in use, per address family (ipv4, ipv6).",
	}, []string{"server", "family"})
)

// report adds what one rewrite did to the metrics, and logs drops at debug.
func (t *tally) report(ctx context.Context) {
	if *t == (tally{}) {
		return
	}
	server := metrics.WithServer(ctx)
	add(rewrittenCount, t.rewrittenA, server, "A")
	add(rewrittenCount, t.rewrittenAAAA, server, "AAAA")
	add(droppedCount, t.droppedA, server, "A")
	add(droppedCount, t.droppedAAAA, server, "AAAA")
	add(droppedCount, t.droppedTXT, server, "TXT")
	if t.hidden > 0 {
		hiddenCount.WithLabelValues(server).Add(float64(t.hidden))
	}
	if t.droppedA+t.droppedAAAA > 0 {
		log.Debugf("dropped %d A and %d AAAA internal records without a global address", t.droppedA, t.droppedAAAA)
	}
}

func add(c *prometheus.CounterVec, n int, labels ...string) {
	if n > 0 {
		c.WithLabelValues(labels...).Add(float64(n))
	}
}
