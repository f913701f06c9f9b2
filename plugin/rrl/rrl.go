// Package rrl implements response rate limiting (RRL) as BIND 9 does it: it
// keeps an account of credits per client network and kind of response, and
// drops UDP responses, or sends them truncated, when a network gets more of
// one kind than its rate, so that forged queries cannot turn the server into
// an amplifier.
package rrl

import (
	"context"
	"hash/maphash"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/miekg/dns"
)

var log = clog.NewWithPlugin(pluginName)

// config is the rrl directive of one server block.
type config struct {
	rates        [classes]int // responses per second; 0: not limited
	window       int          // seconds
	slip         int
	ipv4Length   int
	ipv6Length   int
	maxTableSize int
	exempt       []netip.Prefix
	logOnly      bool
}

// limits reports whether any rate is set.
func (c *config) limits() bool {
	for _, r := range c.rates {
		if r > 0 {
			return true
		}
	}
	return false
}

// RRL is the rrl handler of one server block.
type RRL struct {
	Next plugin.Handler

	cfg   config
	table *table
	seed  maphash.Seed // of the account keys
	epoch time.Time    // the table's clock counts from here

	mu      sync.RWMutex
	servers map[string]*serverMetrics // by server label
}

func newRRL(cfg config) *RRL {
	return &RRL{
		cfg:     cfg,
		table:   newTable(cfg.maxTableSize),
		seed:    maphash.MakeSeed(),
		epoch:   time.Now(),
		servers: map[string]*serverMetrics{},
	}
}

// Name implements plugin.Handler.
func (r *RRL) Name() string { return pluginName }

// ServeDNS implements plugin.Handler. A UDP query from a client that is not
// exempt gets a ResponseWriter that holds the reply written through it, and
// once the plugins below have returned, rrl accounts for the reply and sends
// it, slips it or drops it; everything else passes untouched.
//
// Both choices keep rrl from making the query's goroutine stack grow: each
// UDP query runs on a fresh goroutine, whose small first stack the runtime
// copies into a larger one when a call goes deeper. The reply is packed and
// sent from here, not from below the backend; and the UDP path calls the
// next plugin itself rather than through plugin.NextOrFailure, whose frames
// were enough to make cache's, below, outgrow the first stack
// (bench/HISTORY.md). What is lost is the tracing span of the next plugin; the
// plugin a reply is attributed to (metrics) is rrl either way, since a
// ResponseWriter that wraps stands in for the plugins below it.
func (r *RRL) ServeDNS(ctx context.Context, w dns.ResponseWriter, req *dns.Msg) (int, error) {
	prefix, ok := r.limitable(w)
	if !ok || r.Next == nil {
		return plugin.NextOrFailure(r.Name(), r.Next, ctx, w, req)
	}
	rw := &ResponseWriter{ResponseWriter: w, rrl: r, ctx: ctx, prefix: prefix}
	rc, err := r.Next.ServeDNS(ctx, rw, req)
	rw.returned = true
	if !plugin.ClientWrite(rc) && !rw.written {
		return rw.writeError(req, rc), err
	}
	if werr := rw.flush(); err == nil {
		err = werr
	}
	return rc, err
}

// limitable returns the prefix of the client of w, as the account keys hold
// it, and whether its replies are limited: UDP only (a TCP client cannot
// forge its address), and not from an exempt client.
func (r *RRL) limitable(w dns.ResponseWriter) (netip.Addr, bool) {
	if !r.cfg.limits() {
		return netip.Addr{}, false
	}
	udp, ok := w.RemoteAddr().(*net.UDPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(udp.IP)
	if !ok {
		return netip.Addr{}, false
	}
	a = a.Unmap()
	for _, p := range r.cfg.exempt {
		if p.Contains(a) {
			return netip.Addr{}, false
		}
	}
	bits := r.cfg.ipv6Length
	if a.Is4() {
		bits = r.cfg.ipv4Length
	}
	p, _ := a.Prefix(bits)
	return p.Addr(), true
}

// judge accounts for res, a reply to a client of prefix, and says whether
// to send it, slip it or drop it; with log-only always to send it.
func (r *RRL) judge(ctx context.Context, prefix netip.Addr, res *dns.Msg) verdict {
	c, name, qtype := classify(res)
	now := int64(time.Since(r.epoch))
	v, by := send, c
	if rate := r.cfg.rates[c]; rate > 0 {
		v = r.debit(ctx, prefix, c, accountKey(r.seed, prefix, c, name, qtype), now, rate, r.cfg.slip)
	}
	if rate := r.cfg.rates[classAll]; rate > 0 {
		// As in BIND, responses over all-per-second are never slipped.
		if r.debit(ctx, prefix, classAll, accountKey(r.seed, prefix, classAll, "", 0), now, rate, 0) != send {
			v, by = drop, classAll
		}
	}
	switch v {
	case drop:
		r.metricsOf(metrics.WithServer(ctx)).dropped[by].Inc()
	case slip:
		r.metricsOf(metrics.WithServer(ctx)).slipped[by].Inc()
	}
	if r.cfg.logOnly {
		return send
	}
	return v
}

// debit spends a credit of one account, keeps the table's gauge and logs
// when the account begins to be limited.
func (r *RRL) debit(ctx context.Context, prefix netip.Addr, c class, key uint64, now int64, rate, slipEvery int) verdict {
	v, started, grew := r.table.debit(key, now, rate, r.cfg.window, slipEvery)
	if grew {
		r.metricsOf(metrics.WithServer(ctx)).table.Set(float64(r.table.len()))
	}
	if started {
		r.logStart(prefix, c)
	}
	return v
}

// logStart logs that the responses of class c to the network of prefix have
// begun to be limited.
func (r *RRL) logStart(prefix netip.Addr, c class) {
	bits := r.cfg.ipv6Length
	if prefix.Is4() {
		bits = r.cfg.ipv4Length
	}
	what := "limiting"
	if r.cfg.logOnly {
		what = "would limit (log-only)"
	}
	log.Infof("%s responses of class %s to %s/%d: over %d per second", what, c, prefix, bits, r.cfg.rates[c])
}
