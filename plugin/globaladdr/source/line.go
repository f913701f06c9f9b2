package source

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// DefaultEvery is how often the polled sources ask, without an every
// property: a rate that routers and public STUN servers accept.
const DefaultEvery = 60 * time.Second

// MinEvery is the shortest every the Corefile may give.
const MinEvery = time.Second

// maxProbeTime bounds one probe, and every bounds it further.
const maxProbeTime = 10 * time.Second

// line is the runner of one learned source's from line: the probers of a
// polled source (one, or several that vote), or an interface.
type line struct {
	name    string // as the Corefile writes it: "stun a b c"
	kind    probe.Kind
	probers []probe.Prober
	names   []string // each prober's name, for logs and metrics
	// every is how often the probers are asked; 0 for an interface,
	// which is asked at start and whenever its probe.Listener hears of a
	// change, never polled.
	every time.Duration
	// internal reports the block's internal addresses.
	internal func(netip.Addr) bool
}

// String names the line as the Corefile does.
func (l *line) String() string { return l.name }

// reports says, in words, that the line's source gave a.
func (l *line) reports(a netip.Addr) string {
	switch l.kind {
	case probe.Router:
		return "the router reports WAN address " + a.String()
	case probe.Observer:
		return "the server sees the uplink's address as " + a.String()
	}
	return "the interface's address is " + a.String()
}

// answer is one prober's last answer, checked: nil accepted and refused
// while it has none (it failed, or has not answered yet).
type answer struct {
	accepted []netip.Addr
	refused  []refused
}

// heard is what a probe.Listener told: addresses, or nil to probe at once.
type heard struct {
	mu      sync.Mutex
	addrs   [][]netip.Addr // per prober; nil: nothing heard
	probe   []bool         // per prober: probe at once
	changed chan struct{}  // signalled when addrs or probe changed
}

// run probes at start and then every l.every (and when a probe.Listener asks),
// and reports each round to r, until ctx is done. Then it closes the
// probers that are io.Closers.
func (l *line) run(ctx context.Context, r reporter) {
	answers := make([]answer, len(l.probers))
	errs := make([]string, len(l.probers)) // the reason of the error last logged per prober
	h := &heard{addrs: make([][]netip.Addr, len(l.probers)), probe: make([]bool, len(l.probers)), changed: make(chan struct{}, 1)}
	var listening sync.WaitGroup
	for i, p := range l.probers {
		if lis, ok := p.(probe.Listener); ok {
			listening.Add(1)
			go func() {
				defer listening.Done()
				l.listen(ctx, lis, i, h)
			}()
		}
	}
	defer func() {
		listening.Wait()
		for i, p := range l.probers {
			if c, ok := p.(io.Closer); ok {
				if err := c.Close(); err != nil {
					log.Infof("%s: closing: %v", l.names[i], err)
				}
			}
		}
	}()
	var tick <-chan time.Time
	if l.every > 0 {
		t := time.NewTicker(l.every)
		defer t.Stop()
		tick = t.C
	}
	all := make([]bool, len(l.probers))
	for i := range all {
		all[i] = true
	}
	which := all
	var disagreement [2]string // the disagreement last logged per family
	for {
		l.probe(ctx, which, answers, errs, r)
		if ctx.Err() != nil {
			return
		}
		r.learned(l.vote(answers, r, &disagreement))
		select {
		case <-ctx.Done():
			return
		case <-tick:
			which = all
		case <-h.changed:
			h.mu.Lock()
			which = slices.Clone(h.probe)
			for i, addrs := range h.addrs {
				if addrs != nil {
					answers[i] = l.check(addrs, l.names[i], r)
					r.succeededIf(answers[i], l.names[i])
				}
				h.addrs[i], h.probe[i] = nil, false
			}
			h.mu.Unlock()
		}
	}
}

// listen runs the probe.Listener of prober i, putting what it hears in h.
func (l *line) listen(ctx context.Context, lis probe.Listener, i int, h *heard) {
	err := lis.Listen(ctx, func(addrs []netip.Addr) {
		h.mu.Lock()
		if addrs == nil {
			h.probe[i] = true
		} else {
			h.addrs[i] = slices.Clone(addrs)
		}
		h.mu.Unlock()
		select {
		case h.changed <- struct{}{}:
		default:
		}
	})
	if err != nil && ctx.Err() == nil {
		how := "asked at start only"
		if l.every > 0 {
			how = "polling every " + l.every.String()
		}
		log.Infof("%s: not listening for announcements: %v; %s", l.names[i], err, how)
	}
}

// probe asks the probers that which marks, at once, and waits for all.
func (l *line) probe(ctx context.Context, which []bool, answers []answer, errs []string, r reporter) {
	timeout := maxProbeTime
	if l.every > 0 {
		timeout = min(timeout, l.every)
	}
	var done sync.WaitGroup
	for i, p := range l.probers {
		if !which[i] {
			continue
		}
		done.Add(1)
		go func() {
			defer done.Done()
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			addrs, err := p.Probe(pctx)
			if err == nil && len(addrs) == 0 {
				err = probe.Errorf(probe.ReasonNoAddress, "no address in the answer")
			}
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				// Logged once while its reason lasts: a message may
				// differ at each probe (a socket's port).
				answers[i] = answer{}
				reason := probe.ReasonOf(err)
				r.failed(l.names[i], reason)
				if reason != errs[i] {
					errs[i] = reason
					log.Warningf("%s: %v; keeping the last good global addresses", l.names[i], err)
				}
				return
			}
			if errs[i] != "" {
				errs[i] = ""
				log.Infof("%s: answering again", l.names[i])
			}
			answers[i] = l.check(addrs, l.names[i], r)
			r.succeededIf(answers[i], l.names[i])
		}()
	}
	done.Wait()
}

// succeededIf records a success of by when a holds an accepted address.
func (r reporter) succeededIf(a answer, by string) {
	if len(a.accepted) > 0 {
		r.succeeded(by)
	}
}

// check sorts the addresses by gave into accepted and refused ones,
// counting each refusal. A refusal is kept only for a family of which no
// address was accepted.
func (l *line) check(addrs []netip.Addr, by string, r reporter) answer {
	var a answer
	for _, addr := range addrs {
		if reason := refusal(addr, l.internal); reason != "" {
			r.refused(by, reason)
			a.refused = append(a.refused, refused{addr: addr, reason: reason, by: by})
		} else if !slices.Contains(a.accepted, addr) {
			a.accepted = append(a.accepted, addr)
		}
	}
	slices.SortFunc(a.accepted, netip.Addr.Compare)
	a.refused = slices.DeleteFunc(a.refused, func(x refused) bool {
		return len(ofFamily(a.accepted, family(x.addr))) > 0
	})
	return a
}

// vote makes one learning of the probers' answers. Per family, the
// addresses that a strict majority of the probers that answered with
// accepted addresses of that family agree on are taken (a single prober
// is its own majority); without one, the family is left out (the line keeps
// its last good addresses of it), and the disagreement is counted, and logged
// once while it lasts (logged holds what was logged per family).
func (l *line) vote(answers []answer, r reporter, logged *[2]string) learning {
	var out learning
	for fam := range 2 {
		var (
			keys  []string
			count = map[string]int{}
			says  []string
		)
		for i, a := range answers {
			addrs := ofFamily(a.accepted, fam)
			if len(addrs) == 0 {
				continue
			}
			key := joinAddrs(addrs)
			if count[key] == 0 {
				keys = append(keys, key)
			}
			count[key]++
			says = append(says, fmt.Sprintf("%s says %s", l.names[i], key))
		}
		if len(keys) == 0 {
			logged[fam] = ""
			for _, a := range answers {
				out.refused = append(out.refused, ofRefused(a.refused, fam)...)
			}
			continue
		}
		best := slices.MaxFunc(keys, func(a, b string) int { return count[a] - count[b] })
		n := len(says)
		if 2*count[best] > n {
			logged[fam] = ""
			for _, a := range answers {
				if joinAddrs(ofFamily(a.accepted, fam)) == best {
					out.addrs = append(out.addrs, ofFamily(a.accepted, fam)...)
					break
				}
			}
			continue
		}
		r.disagreed()
		msg := fmt.Sprintf("%s: the servers disagree on the IPv%d address: %s; no strict majority of the %d that answered; keeping the last good address",
			l.name, 4+2*fam, strings.Join(says, ", "), n)
		if msg != logged[fam] {
			logged[fam] = msg
			log.Warning(msg)
		}
	}
	return out
}

// ofRefused returns the refusals of family fam.
func ofRefused(rs []refused, fam int) []refused {
	var out []refused
	for _, x := range rs {
		if family(x.addr) == fam {
			out = append(out, x)
		}
	}
	return out
}

// newLine returns the runner of a from line named name, of kind, with its
// probers; New sets its every and internal.
func newLine(name string, kind probe.Kind, probers []probe.Prober) *line {
	l := &line{name: name, kind: kind, probers: probers}
	for _, p := range probers {
		by := name
		if s, ok := p.(fmt.Stringer); ok {
			by = s.String()
		}
		l.names = append(l.names, by)
	}
	return l
}
