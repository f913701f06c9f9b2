package source

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// parsePrefixValue reads the value of a prefix source for a map whose FROM
// is from: one IPv6 prefix of from's length, or one IPv6 address, whose
// prefix of from's length is taken; a # starts a comment. A prefix of
// another length is refused, a shorter one too: which of its subnets the
// LAN uses is for the writer to say. reason is the refusal's reason when the
// prefix is well formed but can't be served.
func parsePrefixValue(text string, from netip.Prefix, internal func(netip.Addr) bool) (to netip.Prefix, reason string, err error) {
	if len(text) > maxValue {
		return to, "", fmt.Errorf("the value is larger than %d bytes", maxValue)
	}
	var words []string
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		words = append(words, strings.Fields(line)...)
	}
	if len(words) != 1 {
		return to, "", errors.New("the value must hold one IPv6 prefix")
	}
	if a, ok := probe.ParseAddr(words[0]); ok {
		to = netip.PrefixFrom(a, from.Bits())
	} else if to, err = netip.ParsePrefix(words[0]); err != nil || to.Addr().Zone() != "" {
		return to, "", fmt.Errorf("%.64q is not an IPv6 prefix", words[0])
	}
	switch {
	case !to.Addr().Is6() || to.Addr().Is4In6():
		return to, "", fmt.Errorf("%s is not an IPv6 prefix", to)
	case to.Bits() != from.Bits():
		return to, refusedPrefixLength, fmt.Errorf("the prefix %s is a /%d, and %s is a /%d: write the /%d the LAN uses (a /56 delegation holds 256 /64s: which one is for the writer to say)",
			to, to.Bits(), from, from.Bits(), from.Bits())
	}
	to = to.Masked()
	if reason = refusal(to.Addr(), internal); reason != "" {
		return to, reason, fmt.Errorf("the prefix %s: %s", to, refusalWords(reason))
	}
	return to, "", nil
}

// prefixValue takes what the file or etcd source of a prefix feed
// delivered.
func (r reporter) prefixValue(text string, err error) {
	s, f := r.s, r.f
	reason := reasonRead
	var to netip.Prefix
	if err == nil {
		var refusedFor string
		to, refusedFor, err = parsePrefixValue(text, f.prefix.from, s.internal)
		reason = reasonInvalid
		if refusedFor != "" {
			s.count(refusedCount, f.String(), refusedFor)
		}
	}
	if err != nil {
		r.prefixError(err, reason)
		return
	}
	r.setPrefix(to)
}

// learnedPrefix takes what the interface line of a prefix feed learned:
// the prefix of its first global IPv6 address.
func (r reporter) learnedPrefix(l learning) {
	v6 := ofFamily(l.addrs, 1)
	if len(v6) == 0 {
		r.prefixError(errors.New("the interface has no global IPv6 address"), "")
		return
	}
	r.setPrefix(netip.PrefixFrom(v6[0], r.f.prefix.from.Bits()).Masked())
}

// prefixError logs err, once while it lasts, and counts it for reason
// unless reason is "" (the interface line counted it).
func (r reporter) prefixError(err error, reason string) {
	s, f := r.s, r.f
	s.mu.Lock()
	defer s.mu.Unlock()
	if reason != "" {
		s.count(sourceErrorCount, f.String(), reason)
	}
	if err.Error() == f.err {
		return
	}
	f.err = err.Error()
	keep := "the addresses in " + f.prefix.from.String() + " are dropped from the external view until it gives one"
	if to, ok := f.prefix.Load(); ok {
		keep = "keeping " + to.String()
	}
	log.Warningf("%s: %v; %s", f.logName(), err, keep)
}

// setPrefix makes to the feed's prefix, and tells the subscribers when it
// changed.
func (r reporter) setPrefix(to netip.Prefix) {
	s, f := r.s, r.f
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastSuccess(f.String())
	f.err = ""
	was, ok := f.prefix.Load()
	if ok && was == to {
		return
	}
	f.prefix.to.Store(&to)
	if ok {
		log.Infof("map %s %s: translating into %s (was %s)", f.prefix.from, f.logName(), to, was)
	} else {
		log.Infof("map %s %s: translating into %s", f.prefix.from, f.logName(), to)
	}
	s.subs.tell(s.current)
}
