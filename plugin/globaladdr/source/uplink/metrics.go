package uplink

import (
	"github.com/coredns/coredns/plugin"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

const subsystem = "globaladdr"

var (
	upGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: subsystem,
		Name:      "uplink_up",
		Help:      "Gauge of each named uplink's state: 1 while it is up (its addresses may be served), 0 while it is down.",
	}, []string{"server", "uplink"})

	changeTime = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: subsystem,
		Name:      "uplink_last_change_timestamp_seconds",
		Help:      "Unix time at which each named uplink's state last changed (or the server started).",
	}, []string{"server", "uplink"})

	checks = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: subsystem,
		Name:      "uplink_checks_total",
		Help:      "Counter of the runs of each uplink's check, by result: ok, or the reason it failed (timeout, unreachable, rejected, tls, malformed, other).",
	}, []string{"server", "uplink", "result"})

	checkDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: plugin.Namespace,
		Subsystem: subsystem,
		Name:      "uplink_check_duration_seconds",
		Help:      "Histogram of the time each uplink's check took, passed or failed.",
		Buckets:   prometheus.ExponentialBuckets(0.005, 2, 12),
	}, []string{"server", "uplink"})

	lastGood = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: subsystem,
		Name:      "uplinks_all_down",
		Help:      "Gauge per address family (ipv4, ipv6): 1 while every uplink that gives addresses of it is down, and the external view serves their last good addresses (fail static); 0 otherwise.",
	}, []string{"server", "family"})
)
