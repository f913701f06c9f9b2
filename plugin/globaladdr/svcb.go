package globaladdr

import (
	"net"
	"net/netip"

	"github.com/miekg/dns"
)

// rewriteHints appends to out a copy of the SVCB or HTTPS record rr whose
// ipv4hint and ipv6hint addresses went through the rules of A and AAAA
// records: an internal address becomes its mapping or the global addresses
// of its family, or is lost when it has none; repeats go. A key left with no
// address is removed, from the mandatory key too. The rest of the record is
// kept as it was.
func (p *policy) rewriteHints(out []dns.RR, rr dns.RR, g *globals, t *tally) ([]dns.RR, error) {
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
func (p *policy) rewriteHintAddrs(ips []net.IP, v4 bool, g *globals, t *tally, typ uint16) ([]net.IP, error) {
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
		case p.isInternal(a):
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
