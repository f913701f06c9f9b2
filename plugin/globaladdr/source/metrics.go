package source

import (
	"github.com/coredns/coredns/plugin"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var sourceErrorCount = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: plugin.Namespace,
	Subsystem: pluginName,
	Name:      "source_errors_total",
	Help:      "Counter of from sources turning unusable: unreadable, missing, or holding a value that is not a list of global addresses.",
}, []string{"server", "source"})
