package globaladdr

import (
	"net"
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// rewrite returns the external view of m: m itself when no record needs to
// change (without allocating), else a copy in which internal addresses are
// replaced, and hidden names, ownership records and addresses without a
// global counterpart are gone. m and its records are never modified. The
// error is errNoGlobal when a replacement needs a global address that is not
// known yet. Rewriting a rewritten message changes nothing.
func (p *policy) rewrite(m *dns.Msg, g *globals, t *tally) (*dns.Msg, error) {
	an, ns, ex := p.firstChange(m.Answer), p.firstChange(m.Ns), p.firstChange(m.Extra)
	if an < 0 && ns < 0 && ex < 0 {
		return m, nil
	}
	out := &dns.Msg{MsgHdr: m.MsgHdr, Compress: m.Compress, Question: m.Question}
	var err error
	if out.Answer, err = p.section(m.Answer, an, g, t); err != nil {
		return nil, err
	}
	if out.Ns, err = p.section(m.Ns, ns, g, t); err != nil {
		return nil, err
	}
	if out.Extra, err = p.section(m.Extra, ex, g, t); err != nil {
		return nil, err
	}
	return out, nil
}

// firstChange returns the index of the first record of rrs that needs to
// change, or -1 when none does.
func (p *policy) firstChange(rrs []dns.RR) int {
	for i, rr := range rrs {
		if p.judge(rr) != keep {
			return i
		}
	}
	return -1
}

// section returns the external view of one section of a message, in which
// rrs[from] is the first record that needs to change (-1: none does). Each
// record is judged once, and the whole takes time linear in len(rrs).
func (p *policy) section(rrs []dns.RR, from int, g *globals, t *tally) ([]dns.RR, error) {
	if from < 0 {
		return rrs, nil
	}
	var (
		out    = make([]dns.RR, 0, len(rrs))
		seen   = index[member, struct{}]{hint: len(rrs)} // the addresses in out, to drop repeats
		signed bool
		err    error
	)
	for i, rr := range rrs {
		act := keep
		if i >= from {
			act = p.judge(rr)
		}
		switch act {
		case keep:
			_, sig := rr.(*dns.RRSIG)
			signed = signed || sig
			out = appendNew(out, &seen, rr)
		case rewriteAddr:
			out, err = p.rewriteAddr(out, &seen, rr, g, t)
		case rewriteHints:
			out, err = p.rewriteHints(out, rr, g, t)
		case dropAddr, dropData:
			t.dropped(rr.Header().Rrtype, 1)
		case dropHidden:
			t.hidden++
		case dropRegistry:
			t.droppedTXT++
		}
		if err != nil {
			return nil, err
		}
	}
	if signed {
		out = p.dropStaleSignatures(out, rrs)
	}
	uniformTTL(out)
	return out, nil
}

// rrset names an RRset: its owner name in lower case, and its type.
type rrset struct {
	name string
	typ  uint16
}

func rrsetOf(h *dns.RR_Header) rrset {
	return rrset{strings.ToLower(h.Name), h.Rrtype}
}

// member is one address of an A or AAAA RRset.
type member struct {
	rrset
	addr netip.Addr
}

// appendNew appends rr to out unless it is an A or AAAA record whose address
// its RRset in out already has (seen holds those).
func appendNew(out []dns.RR, seen *index[member, struct{}], rr dns.RR) []dns.RR {
	if ip, v4, ok := address(rr); ok {
		a, _ := addrOf(ip, v4)
		if !seen.add(member{rrsetOf(rr.Header()), a}, struct{}{}) {
			return out
		}
	}
	return append(out, rr)
}

// ttlRuled reports whether rr's RRset can mix rewritten and untouched
// records, whose TTLs then differ.
func ttlRuled(rr dns.RR) bool {
	switch rr.Header().Rrtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeSVCB, dns.TypeHTTPS:
		return true
	}
	return false
}

// uniformTTL gives each RRset of out that a rewrite can touch one TTL, the
// lowest of its records (RFC 2181 section 5.2). What it changes, it copies.
func uniformTTL(out []dns.RR) {
	if sameTTL(out) {
		return
	}
	low := index[rrset, uint32]{hint: len(out)}
	for _, rr := range out {
		if !ttlRuled(rr) {
			continue
		}
		k := rrsetOf(rr.Header())
		if l, ok := low.get(k); !ok || rr.Header().Ttl < l {
			low.set(k, rr.Header().Ttl)
		}
	}
	for i, rr := range out {
		if !ttlRuled(rr) {
			continue
		}
		if l, _ := low.get(rrsetOf(rr.Header())); rr.Header().Ttl > l {
			out[i] = dns.Copy(rr)
			out[i].Header().Ttl = l
		}
	}
}

// sameTTL reports whether the records of rrs that uniformTTL rules all have
// one TTL, so that no RRset has a TTL to lower: the common case, seen in one
// pass.
func sameTTL(rrs []dns.RR) bool {
	first := -1
	for _, rr := range rrs {
		if !ttlRuled(rr) {
			continue
		}
		switch ttl := int(rr.Header().Ttl); {
		case first < 0:
			first = ttl
		case ttl != first:
			return false
		}
	}
	return true
}

// rewriteAddr appends to out what the internal A or AAAA record rr becomes,
// leaving out the addresses its RRset in out already has.
func (p *policy) rewriteAddr(out []dns.RR, seen *index[member, struct{}], rr dns.RR, g *globals, t *tally) ([]dns.RR, error) {
	ip, v4, _ := address(rr)
	a, _ := addrOf(ip, v4)
	var buf [1]net.IP
	repl, err := p.replace(a, g, &buf)
	if err != nil {
		return nil, err
	}
	hdr := *rr.Header()
	if len(repl) == 0 {
		t.dropped(hdr.Rrtype, 1)
		return out, nil
	}
	if p.ttl >= 0 {
		hdr.Ttl = uint32(p.ttl)
	}
	set := rrsetOf(&hdr)
	for _, ip := range repl {
		a, _ := addrOf(ip, v4)
		if !seen.add(member{set, a}, struct{}{}) {
			continue
		}
		if v4 {
			out = append(out, &dns.A{Hdr: hdr, A: ip})
		} else {
			out = append(out, &dns.AAAA{Hdr: hdr, AAAA: ip})
		}
	}
	t.rewritten(hdr.Rrtype)
	return out, nil
}

// dropStaleSignatures removes from out, the external view of rrs, the
// RRSIGs over an RRset of rrs a record of which was rewritten or removed:
// they no longer verify. Signed sections are rare, so it judges again
// rather than have every rewrite remember what changed.
func (p *policy) dropStaleSignatures(out, rrs []dns.RR) []dns.RR {
	var stale index[rrset, struct{}]
	for _, rr := range rrs {
		if _, sig := rr.(*dns.RRSIG); !sig && p.judge(rr) != keep {
			stale.set(rrsetOf(rr.Header()), struct{}{})
		}
	}
	kept := out[:0]
	for _, rr := range out {
		if sig, ok := rr.(*dns.RRSIG); ok {
			if _, drop := stale.get(rrset{strings.ToLower(sig.Hdr.Name), sig.TypeCovered}); drop {
				continue
			}
		}
		kept = append(kept, rr)
	}
	return kept
}

// replace returns what the internal address a becomes: its mapping, or the
// global addresses of its family (none: the record is dropped). A mapping's
// address is returned in buf, which the caller may keep on its stack.
func (p *policy) replace(a netip.Addr, g *globals, buf *[1]net.IP) ([]net.IP, error) {
	if m := p.lookupMap(a); m != nil {
		buf[0] = m.translate(a)
		return buf[:], nil
	}
	if g == nil {
		return nil, errNoGlobal
	}
	return g.family(a), nil
}
