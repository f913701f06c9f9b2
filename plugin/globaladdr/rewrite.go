package globaladdr

import (
	"net"
	"strings"

	"github.com/miekg/dns"
)

// tally counts what one rewrite did, for the metrics.
type tally struct {
	rewrittenA, rewrittenAAAA int
	droppedA, droppedAAAA     int
	droppedTXT                int
	hidden                    int
}

// rewrite returns the external view of m: m itself when no record needs to
// change (without allocating), else a copy in which internal addresses are
// replaced, and hidden names, ownership records and addresses without a
// global counterpart are gone. m and its records are never modified. The
// error is errNoGlobal when a replacement needs a global address that is not
// known yet. Rewriting a rewritten message changes nothing.
func (p *policy) rewrite(m *dns.Msg, g *globals, t *tally) (*dns.Msg, error) {
	if !p.touches(m.Answer) && !p.touches(m.Ns) && !p.touches(m.Extra) {
		return m, nil
	}
	out := &dns.Msg{MsgHdr: m.MsgHdr, Compress: m.Compress, Question: m.Question}
	var err error
	if out.Answer, err = p.section(m.Answer, g, t); err != nil {
		return nil, err
	}
	if out.Ns, err = p.section(m.Ns, g, t); err != nil {
		return nil, err
	}
	if out.Extra, err = p.section(m.Extra, g, t); err != nil {
		return nil, err
	}
	return out, nil
}

// touches reports whether any record of rrs needs to change.
func (p *policy) touches(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if p.judge(rr) != keep {
			return true
		}
	}
	return false
}

// section returns the external view of one section of a message.
func (p *policy) section(rrs []dns.RR, g *globals, t *tally) ([]dns.RR, error) {
	if !p.touches(rrs) {
		return rrs, nil
	}
	out := make([]dns.RR, 0, len(rrs))
	var changed []dns.RR // one record of each RRset whose signature is now stale
	for _, rr := range rrs {
		switch p.judge(rr) {
		case keep:
			if !duplicate(out, rr) {
				out = append(out, rr)
			}
			continue
		case rewriteAddr:
			var err error
			if out, err = p.rewriteAddr(out, rr, g, t); err != nil {
				return nil, err
			}
		case dropAddr:
			t.dropped(rr)
		case dropHidden:
			t.hidden++
		case dropRegistry:
			t.droppedTXT++
		}
		changed = append(changed, rr)
	}
	if len(changed) > 0 {
		out = dropStaleSignatures(out, changed)
	}
	return out, nil
}

// rewriteAddr appends to out what the internal A or AAAA record rr becomes.
func (p *policy) rewriteAddr(out []dns.RR, rr dns.RR, g *globals, t *tally) ([]dns.RR, error) {
	ip, v4, _ := address(rr)
	a, _ := addrOf(ip, v4)
	repl, err := p.replace(a, g)
	if err != nil {
		return nil, err
	}
	if len(repl) == 0 {
		t.dropped(rr)
		return out, nil
	}
	hdr := *rr.Header()
	if p.ttl >= 0 {
		hdr.Ttl = uint32(p.ttl)
	}
	for _, ip := range repl {
		var n dns.RR
		if v4 {
			n = &dns.A{Hdr: hdr, A: ip}
		} else {
			n = &dns.AAAA{Hdr: hdr, AAAA: ip}
		}
		if !duplicate(out, n) {
			out = append(out, n)
		}
	}
	t.rewritten(v4)
	return out, nil
}

// address returns the address of an A or AAAA record; ok is false for
// records of other types.
func address(rr dns.RR) (ip net.IP, v4, ok bool) {
	switch rr := rr.(type) {
	case *dns.A:
		return rr.A, true, true
	case *dns.AAAA:
		return rr.AAAA, false, true
	}
	return nil, false, false
}

// duplicate reports whether the A or AAAA record rr repeats the address of
// a record of the same type and owner in rrs. Other types are never
// duplicates.
func duplicate(rrs []dns.RR, rr dns.RR) bool {
	ip, v4, ok := address(rr)
	if !ok {
		return false
	}
	for _, o := range rrs {
		oip, ov4, ok := address(o)
		if ok && ov4 == v4 && oip.Equal(ip) && strings.EqualFold(o.Header().Name, rr.Header().Name) {
			return true
		}
	}
	return false
}

// dropStaleSignatures removes the RRSIGs that cover an RRset of which a
// record was rewritten or removed: they no longer verify.
func dropStaleSignatures(rrs, changed []dns.RR) []dns.RR {
	out := rrs[:0]
	for _, rr := range rrs {
		if sig, ok := rr.(*dns.RRSIG); ok && coversAny(sig, changed) {
			continue
		}
		out = append(out, rr)
	}
	return out
}

func coversAny(sig *dns.RRSIG, changed []dns.RR) bool {
	for _, rr := range changed {
		h := rr.Header()
		if sig.TypeCovered == h.Rrtype && strings.EqualFold(sig.Hdr.Name, h.Name) {
			return true
		}
	}
	return false
}

func (t *tally) dropped(rr dns.RR) {
	if _, v4 := rr.(*dns.A); v4 {
		t.droppedA++
	} else {
		t.droppedAAAA++
	}
}

func (t *tally) rewritten(v4 bool) {
	if v4 {
		t.rewrittenA++
	} else {
		t.rewrittenAAAA++
	}
}
