// Package uplink is the health of a globaladdr block's named uplinks: each
// uplink line names one (its from lines or static addresses, where its
// probes leave from, its check, its priority), and this package keeps its
// state, up or down, from the rounds of its probes, with hysteresis, and
// chooses which uplinks' addresses the external view serves. It probes
// nothing and reads nothing itself: the source package runs the probes and
// the checks, and tells it what each round gave.
package uplink

import (
	"context"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

var log = clog.NewWithPlugin("globaladdr")

// DefaultPriority is the priority of an uplink without a priority line,
// and of the addresses of a from line that names no uplink.
const DefaultPriority = 1

// Uplink is one named uplink of a block. Its state is not safe for
// concurrent use: the source package's Set calls its methods under its own
// lock.
type Uplink struct {
	// Name is the uplink's name, as its uplink lines give it.
	Name string
	// Priority orders the uplinks: the lowest priority among those up
	// that have addresses of a family is the only one to serve it.
	Priority int
	// Via is where its probes and its check leave from.
	Via probe.Via
	// Check tests the path through it; nil without a check line, and
	// its from lines' rounds say whether it is up.
	Check probe.Check

	failover, failback int // set by Config.Finish
	down               bool
	// streak counts the rounds in a row that went against the state:
	// failed ones while up, good ones while down.
	streak int
	// lastErr is the error of the last failed round, for the log.
	lastErr  string
	servers  []string // the server labels of the metrics
	priority bool     // a priority line was given
}

// Up reports whether u's addresses may be served: it is not down. A nil
// Uplink, a from line that names none, is always up.
func (u *Uplink) Up() bool { return u == nil || !u.down }

// rank returns u's priority; DefaultPriority for a nil Uplink.
func (u *Uplink) rank() int {
	if u == nil {
		return DefaultPriority
	}
	return u.Priority
}

// Start sets u's metrics for servers, the server labels, at its state: up,
// as every uplink starts.
func (u *Uplink) Start(servers []string) {
	u.servers = servers
	u.report(time.Now())
}

// Observe takes one round of u's probes: ok, or failed with err. It
// reports whether u's state changed: down after failover failed rounds in
// a row, up again after failback good rounds in a row. Each change is
// logged once, with the reason.
func (u *Uplink) Observe(err error) (changed bool) {
	if err != nil {
		u.lastErr = err.Error()
	}
	if (err != nil) != u.down {
		u.streak++ // against the state
	} else {
		u.streak = 0
	}
	switch {
	case !u.down && u.streak >= u.failover:
		log.Warningf("uplink %s is down: %d failed rounds in a row, the last: %s; its addresses leave the external view while another uplink is up", u.Name, u.streak, u.lastErr)
	case u.down && u.streak >= u.failback:
		log.Infof("uplink %s is up again: %d good rounds in a row; its addresses are served again", u.Name, u.streak)
	default:
		return false
	}
	u.down, u.streak = !u.down, 0
	u.report(time.Now())
	return true
}

// report sets u's state metrics at now.
func (u *Uplink) report(now time.Time) {
	up := 1.0
	if u.down {
		up = 0
	}
	for _, server := range u.servers {
		upGauge.WithLabelValues(server, u.Name).Set(up)
		changeTime.WithLabelValues(server, u.Name).Set(float64(now.UnixNano()) / 1e9)
	}
}

// checked records one run of u's check, which took took and failed with
// err (nil: passed), in the metrics.
func (u *Uplink) checked(took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = probe.ReasonOf(err)
	}
	for _, server := range u.servers {
		checks.WithLabelValues(server, u.Name, result).Inc()
		checkDuration.WithLabelValues(server, u.Name).Observe(took.Seconds())
	}
}

// maxCheckTime bounds one run of a check, and every bounds it further.
const maxCheckTime = 10 * time.Second

// RunCheck runs u's check at once and then every every, until ctx is done,
// and hands each result to round; each run is counted and timed. A check
// that fails at its first run is a warning: a target that can't be reached
// from the start is likely a mistake.
func (u *Uplink) RunCheck(ctx context.Context, every time.Duration, round func(err error)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for first := true; ; first = false {
		cctx, cancel := context.WithTimeout(ctx, min(maxCheckTime, every))
		start := time.Now()
		err := u.Check.Check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		u.checked(time.Since(start), err)
		if first && err != nil {
			log.Warningf("uplink %s: check %s fails at start: %v; the uplink goes down unless it passes soon", u.Name, u.Check, err)
		}
		round(err)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
