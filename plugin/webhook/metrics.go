package webhook

import (
	"net/http"
	"strconv"

	"github.com/coredns/coredns/plugin"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	requests = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "requests_total",
		Help:      "Counter of requests to the external-dns webhook API, by route and status code.",
	}, []string{"route", "code"})
	keysWritten = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "keys_written_total",
		Help:      "Counter of etcd keys the webhook wrote (put) and deleted (delete).",
	}, []string{"op"})
	refusedEndpoints = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "refused_endpoints_total",
		Help:      "Counter of endpoints external-dns sent that the SkyDNS format can't hold.",
	})
	recordsBytes = promauto.NewGauge(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "records_bytes",
		Help:      "Size in bytes of the last GET /records reply; external-dns v0.23 reads at most 32 MiB by default.",
	})
)

// counted counts each request h answers, by its route (its pattern, so
// that a scan of paths makes no new series) and status.
func counted(h *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: rw, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		_, route := h.Handler(r)
		if route == "" {
			route = "unknown"
		}
		requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
	})
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}
