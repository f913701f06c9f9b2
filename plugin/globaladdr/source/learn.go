package source

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// learned takes what the line learned in one round. A family it learned
// addresses of replaces the feed's addresses of that family; a family it
// learned none of keeps the feed's last good ones (a router away, an
// interface whose address was removed, servers that disagree). Then the
// union is published, and each refusal is explained in a warning, once
// while it lasts.
func (r reporter) learned(l learning) {
	s, f := r.s, r.f
	defer f.reported()
	if f.prefix != nil {
		r.learnedPrefix(l)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var addrs []netip.Addr
	for fam := range 2 {
		got := ofFamily(l.addrs, fam)
		f.refused[fam] = len(got) == 0 && slices.ContainsFunc(l.refused, func(r refusedAddr) bool { return family(r.addr) == fam })
		switch {
		case len(got) > 0:
			f.missing[fam] = false
		case f.refused[fam]:
			got = ofFamily(f.addrs, fam)
		default:
			got = ofFamily(f.addrs, fam)
			r.warnMissing(fam, got)
		}
		addrs = append(addrs, got...)
	}
	if len(addrs) > 0 {
		f.addrs = addrs
	}
	f.failure = l.failure
	if f.up != nil && f.up.Check == nil {
		// Without a check, the line's rounds are the uplink's.
		f.up.Observe(l.failure)
	}
	s.publish()
	for fam := range 2 {
		r.warnRefused(fam, l.refused)
	}
}

// warnMissing logs, once while it lasts, that the line learned no address
// of family fam, of which it had kept.
func (r reporter) warnMissing(fam int, kept []netip.Addr) {
	f := r.f
	if len(kept) == 0 || f.missing[fam] {
		return
	}
	f.missing[fam] = true
	log.Warningf("%s: no IPv%d address now; keeping the last good %s", f, 4+2*fam, joinAddrs(kept))
}

// warnRefused logs, once while it lasts, why the line refused its
// addresses of family fam, and what the view serves instead.
func (r reporter) warnRefused(fam int, refusals []refusedAddr) {
	s, f := r.s, r.f
	i := slices.IndexFunc(refusals, func(r refusedAddr) bool { return family(r.addr) == fam })
	if !f.refused[fam] || i < 0 {
		f.warned[fam] = ""
		return
	}
	x := refusals[i]
	served := ofFamily(s.current.Addrs, fam)
	var words string
	switch {
	case len(served) == 0:
		words = fmt.Sprintf("the external view has no IPv%d global address to serve", 4+2*fam)
	case !slices.ContainsFunc(served, func(a netip.Addr) bool { return slices.Contains(f.addrs, a) }):
		words = "the external view serves " + joinAddrs(served) + " from " + servedBy(s.feeds, served)
	default:
		words = "the external view keeps " + joinAddrs(served)
	}
	msg := fmt.Sprintf("%s: %s; %s; %s", x.by, reports(f.line.kind, x.addr), refusalWords(x.reason), words)
	if f.line.kind == probe.Router && (x.reason == refusedPrivate || x.reason == refusedCGNAT) {
		if by := observed(s.feeds, fam); by != "" {
			msg += fmt.Sprintf("; %s sees the uplink as %s: the router sits behind another NAT (double NAT), and %s is served", by, joinAddrs(served), joinAddrs(served))
		}
	}
	if msg != f.warned[fam] {
		f.warned[fam] = msg
		log.Warning(msg)
	}
}

// reports says, in words, that a source of kind gave a.
func reports(kind probe.Kind, a netip.Addr) string {
	switch kind {
	case probe.Router:
		return "the router reports WAN address " + a.String()
	case probe.Observer:
		return "the server sees the uplink's address as " + a.String()
	}
	return "the interface's address is " + a.String()
}

// observed returns the name of an Observer source among feeds that gives
// addresses of family fam, "" when none does.
func observed(feeds []*feed, fam int) string {
	for _, g := range feeds {
		if g.line != nil && g.line.kind == probe.Observer && !g.refused[fam] && len(ofFamily(g.addrs, fam)) > 0 {
			return g.String()
		}
	}
	return ""
}

// servedBy names the feeds that give one of addrs.
func servedBy(feeds []*feed, addrs []netip.Addr) string {
	var by []string
	for _, g := range feeds {
		if slices.ContainsFunc(g.addrs, func(a netip.Addr) bool { return slices.Contains(addrs, a) }) {
			by = append(by, g.String())
		}
	}
	return strings.Join(by, ", ")
}
