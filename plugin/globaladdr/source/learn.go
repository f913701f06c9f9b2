package source

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// learning is what a learned source's line made of one round of answers.
type learning struct {
	// addrs are the addresses it accepted and, with several servers,
	// voted for: none, or some of one or both families.
	addrs []netip.Addr
	// refused are the addresses it refused, of the families it accepted
	// none of.
	refused []refused
}

// refused is one address a line refused, and who gave it.
type refused struct {
	addr   netip.Addr
	reason string
	by     string // the prober's name
}

// reporter is how a line reports to its Set.
type reporter struct {
	s *Set
	f *feed
}

// learned takes a round's learning: see Set.learn.
func (r reporter) learned(l learning) { r.s.learn(r.f, l) }

// failed counts a failed probe of by, for reason.
func (r reporter) failed(by, reason string) { r.s.count(sourceErrorCount, by, reason) }

// refused counts an address of by refused for reason.
func (r reporter) refused(by, reason string) { r.s.count(refusedCount, by, reason) }

// disagreed counts a vote of the line without a strict majority.
func (r reporter) disagreed() { r.s.count(disagreementCount, r.f.String()) }

// succeeded records that by gave a usable answer now.
func (r reporter) succeeded(by string) { r.s.lastSuccess(by) }

// lastSuccess sets the time of by's last usable answer to now.
func (s *Set) lastSuccess(by string) {
	now := float64(time.Now().UnixNano()) / 1e9
	for _, server := range s.servers {
		lastSuccess.WithLabelValues(server, by).Set(now)
	}
}

// learn takes what the line of f learned in one round. A family it learned
// addresses of replaces the feed's addresses of that family; a family it
// learned none of keeps the feed's last good ones (a router away, an
// interface whose address was removed, servers that disagree). Then the
// union is published, and each refusal is explained in a warning, once
// while it lasts.
func (s *Set) learn(f *feed, l learning) {
	defer f.reported()
	if f.prefix != nil {
		s.learnPrefix(f, l)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var addrs []netip.Addr
	for fam := range 2 {
		got := ofFamily(l.addrs, fam)
		f.refused[fam] = len(got) == 0 && slices.ContainsFunc(l.refused, func(r refused) bool { return family(r.addr) == fam })
		switch {
		case len(got) > 0:
			f.missing[fam] = false
		case f.refused[fam]:
			got = ofFamily(f.addrs, fam)
		default:
			got = ofFamily(f.addrs, fam)
			s.warnMissing(f, fam, got)
		}
		addrs = append(addrs, got...)
	}
	if len(addrs) > 0 {
		f.addrs = addrs
	}
	s.publish()
	for fam := range 2 {
		s.warnRefused(f, fam, l.refused)
	}
}

// warnMissing logs, once while it lasts, that the line of f learned no
// address of family fam, of which it had kept.
func (s *Set) warnMissing(f *feed, fam int, kept []netip.Addr) {
	if len(kept) == 0 || f.missing[fam] {
		return
	}
	f.missing[fam] = true
	log.Warningf("%s: no IPv%d address now; keeping the last good %s", f, 4+2*fam, joinAddrs(kept))
}

// warnRefused logs, once while it lasts, why the line of f refused its
// addresses of family fam, and what the view serves instead.
func (s *Set) warnRefused(f *feed, fam int, refusals []refused) {
	i := slices.IndexFunc(refusals, func(r refused) bool { return family(r.addr) == fam })
	if !f.refused[fam] || i < 0 {
		f.warned[fam] = ""
		return
	}
	r := refusals[i]
	served := ofFamily(s.current.Addrs, fam)
	var words string
	switch {
	case len(served) == 0:
		words = fmt.Sprintf("the external view has no IPv%d global address to serve", 4+2*fam)
	case !slices.ContainsFunc(served, func(a netip.Addr) bool { return slices.Contains(f.addrs, a) }):
		words = "the external view serves " + joinAddrs(served) + " from " + s.servedBy(served)
	default:
		words = "the external view keeps " + joinAddrs(served)
	}
	msg := fmt.Sprintf("%s: %s; %s; %s", r.by, f.line.reports(r.addr), refusalWords(r.reason), words)
	if f.line.kind == probe.Router && (r.reason == RefusedPrivate || r.reason == RefusedCGNAT) {
		if by := s.observed(fam); by != "" {
			msg += fmt.Sprintf("; %s sees the uplink as %s: the router sits behind another NAT (double NAT), and %s is served", by, joinAddrs(served), joinAddrs(served))
		}
	}
	if msg != f.warned[fam] {
		f.warned[fam] = msg
		log.Warning(msg)
	}
}

// observed returns the name of an probe.Observer source that gives addresses of
// family fam, "" when none does.
func (s *Set) observed(fam int) string {
	for _, g := range s.feeds {
		if g.line != nil && g.line.kind == probe.Observer && !g.refused[fam] && len(ofFamily(g.addrs, fam)) > 0 {
			return g.String()
		}
	}
	return ""
}

// servedBy names the feeds that give one of addrs.
func (s *Set) servedBy(addrs []netip.Addr) string {
	var by []string
	for _, g := range s.feeds {
		if slices.ContainsFunc(g.addrs, func(a netip.Addr) bool { return slices.Contains(addrs, a) }) {
			by = append(by, g.String())
		}
	}
	return strings.Join(by, ", ")
}

// ofFamily returns the addresses of addrs of family fam (see family).
func ofFamily(addrs []netip.Addr, fam int) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if family(a) == fam {
			out = append(out, a)
		}
	}
	return out
}

// joinAddrs writes addrs separated by commas.
func joinAddrs(addrs []netip.Addr) string {
	words := make([]string, len(addrs))
	for i, a := range addrs {
		words[i] = a.String()
	}
	return strings.Join(words, ", ")
}
