package globaladdr

import (
	"context"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	rewrittenCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "rewritten_total",
		Help:      "Counter of records whose internal address was replaced by a global one: A and AAAA records, and SVCB and HTTPS records by their hints.",
	}, []string{"server", "type"})

	droppedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "dropped_total",
		Help:      "Counter of what external answers lost: internal addresses without a global address of their family (A, AAAA, and SVCB and HTTPS hint addresses), records with an internal address in their data (AMTRELAY, IPSECKEY, L32, L64, APL, ...), and ownership records (TXT); below etcdzone, the records of the question's name and type its zone left out.",
	}, []string{"server", "type"})

	hiddenCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "hidden_total",
		Help:      "Counter of queries for hidden names and of records removed (or, below etcdzone, left out of its zone's answer) because they name a hidden name; behind the etcd plugin, also of the queries and records its marks withhold.",
	}, []string{"server"})

	tunnelledCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "tunnelled_total",
		Help:      "Counter of the internal A and AAAA records of etcdzone's answers that a CNAME to the tunnel stood for (at a name that can't be an alias, they count as dropped).",
	}, []string{"server"})

	unroutedCount = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "unrouted_total",
		Help:      "Counter of the records of etcdzone's answers left out because their name's route (webhook-globaladdr-target) names no target the view has: a value other than tunnel or address, tunnel without a tunnel, or routes that differ.",
	}, []string{"server"})

	marksErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "marks_errors_total",
		Help:      "Counter of failed reads and watches of the exposure marks of the etcd plugin's tree (a block without etcdzone); the marks read last are kept.",
	}, []string{"server"})

	addressCount = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "addresses",
		Help:      "Number of global addresses in use, per address family (ipv4, ipv6).",
	}, []string{"server", "family"})
)

// serverCounters holds the counters of one server, looked up once, so that
// a reply adds to them without hashing label values under the vectors' lock.
type serverCounters struct {
	rewrittenA, rewrittenAAAA         prometheus.Counter
	droppedA, droppedAAAA, droppedTXT prometheus.Counter
	hidden, tunnelled, unrouted       prometheus.Counter
}

// counters caches a *serverCounters per server label. Servers are few and
// live as long as the process; so do their counters in the vectors.
var counters sync.Map

// countersOf returns the counters of server.
func countersOf(server string) *serverCounters {
	if c, ok := counters.Load(server); ok {
		return c.(*serverCounters)
	}
	c, _ := counters.LoadOrStore(server, &serverCounters{
		rewrittenA:    rewrittenCount.WithLabelValues(server, "A"),
		rewrittenAAAA: rewrittenCount.WithLabelValues(server, "AAAA"),
		droppedA:      droppedCount.WithLabelValues(server, "A"),
		droppedAAAA:   droppedCount.WithLabelValues(server, "AAAA"),
		droppedTXT:    droppedCount.WithLabelValues(server, "TXT"),
		hidden:        hiddenCount.WithLabelValues(server),
		tunnelled:     tunnelledCount.WithLabelValues(server),
		unrouted:      unroutedCount.WithLabelValues(server),
	})
	return c.(*serverCounters)
}

// report adds what one rewrite did, t, to the metrics, and logs drops at
// debug.
func report(ctx context.Context, t *outside.Tally) {
	if t.Empty() {
		return
	}
	c := countersOf(metrics.WithServer(ctx))
	add(c.rewrittenA, t.RewrittenA)
	add(c.rewrittenAAAA, t.RewrittenAAAA)
	add(c.droppedA, t.DroppedA)
	add(c.droppedAAAA, t.DroppedAAAA)
	add(c.droppedTXT, t.DroppedTXT)
	add(c.hidden, t.Hidden)
	add(c.tunnelled, t.Tunnelled)
	add(c.unrouted, t.Unrouted)
	for _, r := range t.Rare {
		vec := droppedCount
		if r.Rewritten {
			vec = rewrittenCount
		}
		vec.WithLabelValues(metrics.WithServer(ctx), dns.Type(r.Type).String()).Add(float64(r.N))
	}
	if t.DroppedA+t.DroppedAAAA > 0 {
		log.Debugf("dropped %d A and %d AAAA internal records without a global address", t.DroppedA, t.DroppedAAAA)
	}
	for _, r := range t.Rare {
		if !r.Rewritten {
			log.Debugf("dropped %d %s records or hint addresses holding an internal address", r.N, dns.Type(r.Type))
		}
	}
	if t.FirstDropped != nil {
		log.Debugf("the first record dropped: %s", t.FirstDropped)
	}
}

func add(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}
