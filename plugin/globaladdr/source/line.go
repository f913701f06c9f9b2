package source

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// maxProbeTime bounds one probe, and every bounds it further.
const maxProbeTime = 10 * time.Second

// runner is the runner of one learned source's from line: the probers of a
// polled source (one, or several that vote), or an interface.
type runner struct {
	name    string // as the Corefile writes it: "stun a b c"
	kind    probe.Kind
	probers []probe.Prober
	names   []string // each prober's name, for logs and metrics
	// every is how often the probers are asked; 0 for an interface,
	// which is asked at start and whenever its Listener hears of a
	// change, never polled.
	every time.Duration
	// internal reports the block's internal addresses.
	internal func(netip.Addr) bool
}

// lineState is what a line keeps from one round to the next, per prober
// and per family.
type lineState struct {
	answers []answer
	// errs holds, per prober, the reason of the error last logged, and
	// failures the error of its last answer (nil when it answered).
	errs     []string
	failures []error
	// disagreement holds, per family, the disagreement last logged.
	disagreement [2]string
}

// run probes at start and then every l.every (and when a Listener asks),
// and reports each round to r, until ctx is done. Then it closes the
// probers that are io.Closers.
func (l *runner) run(ctx context.Context, r reporter) {
	h := newHeard(len(l.probers))
	defer l.closeProbers(h.listen(ctx, l.probers, l.names, l.every))
	tick, stop := ticker(l.every)
	defer stop()
	st := &lineState{answers: make([]answer, len(l.probers)), errs: make([]string, len(l.probers)), failures: make([]error, len(l.probers))}
	for which := l.all(); ; {
		l.probe(ctx, which, st, r)
		if ctx.Err() != nil {
			return
		}
		l.learn(st, r)
		select {
		case <-ctx.Done():
			return
		case <-tick:
			which = l.all()
		case <-h.changed:
			which = l.hear(h, st, r)
		}
	}
}

// all marks every prober of l.
func (l *runner) all() []bool {
	which := make([]bool, len(l.probers))
	for i := range which {
		which[i] = true
	}
	return which
}

// probe asks the probers that which marks, at once, and waits for all.
func (l *runner) probe(ctx context.Context, which []bool, st *lineState, r reporter) {
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
			if ctx.Err() == nil {
				l.answered(i, addrs, err, st, r)
			}
		}()
	}
	done.Wait()
}

// answered takes prober i's answer to a probe: addrs, or err. An error is
// logged once while its reason lasts: a message may differ at each probe (a
// socket's port).
func (l *runner) answered(i int, addrs []netip.Addr, err error, st *lineState, r reporter) {
	st.failures[i] = err
	if err != nil {
		st.answers[i] = answer{}
		reason := probe.ReasonOf(err)
		r.failed(l.names[i], reason)
		if reason != st.errs[i] {
			st.errs[i] = reason
			log.Warningf("%s: %v; keeping the last good global addresses", l.names[i], err)
		}
		return
	}
	if st.errs[i] != "" {
		st.errs[i] = ""
		log.Infof("%s: answering again", l.names[i])
	}
	l.accept(i, addrs, st, r)
}

// accept makes addrs, what prober i gave, its answer, checked.
func (l *runner) accept(i int, addrs []netip.Addr, st *lineState, r reporter) {
	st.answers[i] = l.check(addrs, l.names[i], r)
	if len(st.answers[i].accepted) > 0 {
		r.succeeded(l.names[i])
	}
}

// check sorts the addresses by gave into accepted and refused ones,
// counting each refusal. A refusal is kept only for a family of which no
// address was accepted.
func (l *runner) check(addrs []netip.Addr, by string, r reporter) answer {
	var a answer
	for _, addr := range addrs {
		if reason := refusal(addr, l.internal); reason != "" {
			r.refusedFrom(by, reason)
			a.refused = append(a.refused, refusedAddr{addr: addr, reason: reason, by: by})
		} else if !slices.Contains(a.accepted, addr) {
			a.accepted = append(a.accepted, addr)
		}
	}
	slices.SortFunc(a.accepted, netip.Addr.Compare)
	a.refused = slices.DeleteFunc(a.refused, func(x refusedAddr) bool {
		return len(ofFamily(a.accepted, family(x.addr))) > 0
	})
	return a
}

// learn reports the vote on the answers of st to r. A disagreement is
// counted at each round, and logged once while it lasts.
func (l *runner) learn(st *lineState, r reporter) {
	learned, disagreed := vote(st.answers, l.names)
	learned.failure = st.unanswered()
	for fam, words := range disagreed {
		if words == "" {
			st.disagreement[fam] = ""
			continue
		}
		r.disagreed()
		if msg := l.name + ": " + words + "; keeping the last good address"; msg != st.disagreement[fam] {
			st.disagreement[fam] = msg
			log.Warning(msg)
		}
	}
	r.learned(learned)
}

// unanswered returns the error of the first prober that failed in the
// last round, when none answered; nil when one did.
func (st *lineState) unanswered() error {
	var first error
	for i, a := range st.answers {
		if len(a.accepted) > 0 || len(a.refused) > 0 {
			return nil
		}
		if first == nil {
			first = st.failures[i]
		}
	}
	if first == nil {
		first = errNoAnswer
	}
	return first
}

// errNoAnswer is a round's failure when no prober gave an error either: an
// interface with no global address.
var errNoAnswer = errors.New("no usable answer")

// closeProbers waits until the Listeners have returned (listening), then
// closes the probers that are io.Closers.
func (l *runner) closeProbers(listening *sync.WaitGroup) {
	listening.Wait()
	for i, p := range l.probers {
		if c, ok := p.(io.Closer); ok {
			if err := c.Close(); err != nil {
				log.Infof("%s: closing: %v", l.names[i], err)
			}
		}
	}
}

// hear takes what h holds: the addresses heard become their probers'
// answers, checked. It returns the probers to probe at once.
func (l *runner) hear(h *heard, st *lineState, r reporter) (which []bool) {
	heard, which := h.take()
	for i, addrs := range heard {
		if addrs != nil {
			l.accept(i, addrs, st, r)
		}
	}
	return which
}
