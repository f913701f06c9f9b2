package outside

import (
	"net"
	"net/netip"

	"github.com/miekg/dns"
)

// Rewrite returns the external view of m at g: m itself when no record
// needs to change (without allocating), else a copy in which internal
// addresses are replaced, and hidden names, ownership records and addresses
// without a global counterpart are gone. m and its records are never
// modified. The error is errNoGlobal when a replacement needs a global
// address that g does not know yet. Rewriting a rewritten message changes
// nothing.
func (p *Policy) Rewrite(m *dns.Msg, g *Globals, t *Tally) (*dns.Msg, error) {
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

// Show returns rrs as the view shows them at g, which knows its global
// addresses: horizon.State.Show. rrs is returned itself when no record
// needs to change; it and its records are never modified.
func (p *Policy) Show(rrs []dns.RR, g *Globals) []dns.RR {
	var t Tally
	out, _ := p.section(rrs, p.firstChange(rrs), g, &t) // g is known: no error
	return out
}

// firstChange returns the index of the first record of rrs that needs to
// change, or -1 when none does.
func (p *Policy) firstChange(rrs []dns.RR) int {
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
func (p *Policy) section(rrs []dns.RR, from int, g *Globals, t *Tally) ([]dns.RR, error) {
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
		default:
			t.drop(act, rr)
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

// Count counts in t what the view does to rr, as Rewrite does, without
// making what rr becomes: it runs after every answer of a zone that a
// backend serves as the view shows it (horizon.View.Judged; see CountOwner).
func (p *Policy) Count(rr dns.RR, g *Globals, t *Tally) {
	switch act := p.judge(rr); act {
	case keep:
	case rewriteAddr:
		ip, v4, _ := address(rr)
		a, _ := addrOf(ip, v4)
		var buf [1]net.IP
		if repl, _ := p.replace(a, g, &buf); len(repl) > 0 {
			t.rewritten(rr.Header().Rrtype)
		} else {
			t.droppedRR(rr)
		}
	case rewriteHints:
		_, _ = p.rewriteHints(nil, rr, g, t) // SVCB and HTTPS: rare
	default:
		t.drop(act, rr)
	}
}

// rewriteAddr appends to out what the internal A or AAAA record rr becomes,
// leaving out the addresses its RRset in out already has.
func (p *Policy) rewriteAddr(out []dns.RR, seen *index[member, struct{}], rr dns.RR, g *Globals, t *Tally) ([]dns.RR, error) {
	ip, v4, _ := address(rr)
	a, _ := addrOf(ip, v4)
	var buf [1]net.IP
	repl, err := p.replace(a, g, &buf)
	if err != nil {
		return nil, err
	}
	hdr := *rr.Header()
	if len(repl) == 0 {
		t.droppedRR(rr)
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

// rewriteHints appends to out a copy of the SVCB or HTTPS record rr whose
// ipv4hint and ipv6hint addresses went through the rules of A and AAAA
// records: an internal address becomes its mapping or the global addresses
// of its family, or is lost when it has none; repeats go. A key left with no
// address is removed, from the mandatory key too. The rest of the record is
// kept as it was.
func (p *Policy) rewriteHints(out []dns.RR, rr dns.RR, g *Globals, t *Tally) ([]dns.RR, error) {
	c := dns.Copy(rr)
	s := hintsOf(c)
	var removed []dns.SVCBKey
	kept := s.Value[:0]
	for _, kv := range s.Value {
		if ips, v4 := hint(kv); ips != nil {
			var err error
			if *ips, err = p.rewriteHintAddrs(*ips, v4, g, t, s.Hdr.Rrtype); err != nil {
				return nil, err
			}
			if len(*ips) == 0 {
				removed = append(removed, kv.Key())
				continue
			}
		}
		kept = append(kept, kv)
	}
	s.Value = kept
	if len(removed) > 0 {
		unmandate(s, removed)
	}
	if p.ttl >= 0 {
		s.Hdr.Ttl = uint32(p.ttl)
	}
	t.rewritten(s.Hdr.Rrtype)
	return append(out, c), nil
}

// rewriteHintAddrs returns the external view of one hint key's addresses.
// Lost addresses are counted as dropped under typ, the record's type.
func (p *Policy) rewriteHintAddrs(ips []net.IP, v4 bool, g *Globals, t *Tally, typ uint16) ([]net.IP, error) {
	var (
		out  = make([]net.IP, 0, len(ips))
		seen index[netip.Addr, struct{}]
		buf  [1]net.IP
	)
	add := func(ip net.IP) {
		if a, _ := addrOf(ip, v4); seen.add(a, struct{}{}) {
			out = append(out, ip)
		}
	}
	for _, ip := range ips {
		a, ok := addrOf(ip, v4)
		switch {
		case !ok:
			t.dropped(typ, 1)
		case p.IsInternal(a):
			repl, err := p.replace(a, g, &buf)
			if err != nil {
				return nil, err
			}
			if len(repl) == 0 {
				t.dropped(typ, 1)
			}
			for _, r := range repl {
				add(r)
			}
		default:
			add(ip)
		}
	}
	return out, nil
}

// replace returns what the internal address a becomes at g: its mapping,
// or the global addresses of its family (none: the record is dropped). A
// mapping's address is returned in buf, which the caller may keep on its
// stack.
func (p *Policy) replace(a netip.Addr, g *Globals, buf *[1]net.IP) ([]net.IP, error) {
	if i := p.lookupMap(a); i >= 0 {
		if buf[0] = p.maps[i].translate(a, g.to[i]); buf[0] == nil {
			return nil, nil
		}
		return buf[:], nil
	}
	if !g.known {
		return nil, errNoGlobal
	}
	return g.family(a), nil
}
