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
// record is judged once.
func (p *policy) section(rrs []dns.RR, from int, g *globals, t *tally) ([]dns.RR, error) {
	if from < 0 {
		return rrs, nil
	}
	out := make([]dns.RR, 0, len(rrs))
	for i, rr := range rrs {
		act := keep
		if i >= from {
			act = p.judge(rr)
		}
		switch act {
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
	}
	out = p.dropStaleSignatures(out, rrs)
	uniformTTL(out)
	return out, nil
}

// uniformTTL gives each A and AAAA RRset of out one TTL, the lowest of its
// records (RFC 2181 section 5.2): a rewritten record's TTL can differ from
// that of an untouched record beside it. What it changes, it copies.
func uniformTTL(out []dns.RR) {
	if sameTTL(out) {
		return
	}
	for i, rr := range out {
		if _, _, ok := address(rr); !ok {
			continue
		}
		if low := lowestTTL(out, rr); rr.Header().Ttl > low {
			out[i] = dns.Copy(rr)
			out[i].Header().Ttl = low
		}
	}
}

// sameTTL reports whether the A and AAAA records of rrs all have one TTL,
// so that no RRset has a TTL to lower: the common case, seen in one pass.
func sameTTL(rrs []dns.RR) bool {
	first := -1
	for _, rr := range rrs {
		if _, _, ok := address(rr); !ok {
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

// lowestTTL returns the lowest TTL of the records of rrs in rr's RRset.
func lowestTTL(rrs []dns.RR, rr dns.RR) uint32 {
	low := rr.Header().Ttl
	for _, o := range rrs {
		if h := o.Header(); h.Rrtype == rr.Header().Rrtype && h.Ttl < low && strings.EqualFold(h.Name, rr.Header().Name) {
			low = h.Ttl
		}
	}
	return low
}

// rewriteAddr appends to out what the internal A or AAAA record rr becomes.
func (p *policy) rewriteAddr(out []dns.RR, rr dns.RR, g *globals, t *tally) ([]dns.RR, error) {
	ip, v4, _ := address(rr)
	a, _ := addrOf(ip, v4)
	var buf [1]net.IP
	repl, err := p.replace(a, g, &buf)
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
	name := rr.Header().Name
	for _, o := range rrs {
		oip, ov4, ok := address(o)
		if ok && ov4 == v4 && oip.Equal(ip) && strings.EqualFold(o.Header().Name, name) {
			return true
		}
	}
	return false
}

// dropStaleSignatures removes from out, the external view of rrs, the RRSIGs
// that cover an RRset of rrs of which a record was rewritten or removed: they
// no longer verify.
func (p *policy) dropStaleSignatures(out, rrs []dns.RR) []dns.RR {
	kept := out[:0]
	for _, rr := range out {
		if sig, ok := rr.(*dns.RRSIG); ok && p.changesRRset(sig, rrs) {
			continue
		}
		kept = append(kept, rr)
	}
	return kept
}

// changesRRset reports whether a record of rrs in the RRset sig covers
// needs to change. Signed sections are rare: judging again costs nothing on
// the common path.
func (p *policy) changesRRset(sig *dns.RRSIG, rrs []dns.RR) bool {
	for _, rr := range rrs {
		h := rr.Header()
		if sig.TypeCovered == h.Rrtype && strings.EqualFold(sig.Hdr.Name, h.Name) && p.judge(rr) != keep {
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
