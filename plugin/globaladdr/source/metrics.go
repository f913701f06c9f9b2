package source

import (
	"github.com/coredns/coredns/plugin"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	sourceErrorCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "source_errors_total",
		Help:      "Counter of from sources failing, by reason: a file or etcd source turning unusable (read, invalid), each failed probe of a polled source's server, or of an interface (timeout, unreachable, discovery, rejected, no_address, malformed, tls, other).",
	}, []string{"server", "source", "reason"})

	refusedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "source_refused_total",
		Help:      "Counter of learned addresses and prefixes refused, by reason: cgnat, private, ula, loopback, link_local, unspecified, multicast, reserved, internal, prefix_length.",
	}, []string{"server", "source", "reason"})

	disagreementCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "source_disagreements_total",
		Help:      "Counter of the rounds in which the servers of one stun or https line gave no strict majority.",
	}, []string{"server", "source"})

	lastSuccess = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "source_last_success_timestamp_seconds",
		Help:      "Unix time at which a learned source (one server of a polled line, an interface, a prefix source) last gave a usable answer.",
	}, []string{"server", "source"})
)

// The reasons for which a file or etcd source is counted in
// source_errors_total.
const (
	reasonRead    = "read"
	reasonInvalid = "invalid"
)
