package rrl

import (
	"github.com/coredns/coredns/plugin"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	droppedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "dropped_total",
		Help:      "Counter of UDP responses dropped because their client network exceeded the rate of their class (with log-only: that would have been dropped).",
	}, []string{"server", "class"})

	slippedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "slipped_total",
		Help:      "Counter of UDP responses over the rate sent truncated (TC) instead, so that a genuine client retries over TCP (with log-only: that would have been).",
	}, []string{"server", "class"})

	tableSize = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "table_size",
		Help:      "Number of accounts (client network and response class) in the rate limiting table, at most max-table-size.",
	}, []string{"server"})
)

// serverMetrics holds the metrics of one server, looked up once.
type serverMetrics struct {
	dropped, slipped [classes]prometheus.Counter
	table            prometheus.Gauge
}

// metricsOf returns the metrics of server.
func (r *RRL) metricsOf(server string) *serverMetrics {
	r.mu.RLock()
	m := r.servers[server]
	r.mu.RUnlock()
	if m != nil {
		return m
	}
	m = &serverMetrics{table: tableSize.WithLabelValues(server)}
	for c := range classes {
		m.dropped[c] = droppedCount.WithLabelValues(server, c.String())
		m.slipped[c] = slippedCount.WithLabelValues(server, c.String())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if existing := r.servers[server]; existing != nil {
		return existing
	}
	r.servers[server] = m
	return m
}
