package signer

import (
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// settle brings the touched nodes (and the RRsets noted with them) to
// what the zone now says: each RRset signed if it is authoritative and
// changed or unsigned, unsigned if it is not; the denial chain holding
// exactly the names it should, each denial record naming its successor
// and the types of its name. Nodes left with nothing are forgotten.
func (s *Signer) settle(touched map[*node]map[uint16]bool, now time.Time, d *Diff) {
	dirty := map[*node]bool{}
	var add []*node
	for n, changed := range touched {
		s.settleSigs(n, changed, now, d)
		switch want := s.wantChain(n); {
		case want && !n.inChain:
			add = append(add, n)
		case !want && n.inChain:
			if p := s.remove(n, d); p != nil {
				dirty[p] = true
			}
		case want:
			dirty[n] = true
		}
	}
	if len(add) > len(s.chain)/4+16 {
		// Many names (a zone's first load): one sort, every record anew.
		for _, n := range add {
			n.inChain = true
		}
		s.chain = append(s.chain, add...)
		slices.SortFunc(s.chain, func(a, b *node) int { return strings.Compare(a.order, b.order) })
		for _, n := range s.chain {
			dirty[n] = true
		}
	} else {
		for _, n := range add {
			i, _ := slices.BinarySearchFunc(s.chain, n.order, func(x *node, o string) int { return strings.Compare(x.order, o) })
			s.chain = slices.Insert(s.chain, i, n)
			n.inChain = true
			dirty[n] = true
			dirty[s.chain[(i+len(s.chain)-1)%len(s.chain)]] = true
		}
	}
	for n := range dirty {
		if n.inChain {
			s.updateDenial(n, now, d)
		}
	}
	for n := range touched {
		if len(n.sets) == 0 && n.below == 0 && !n.inChain {
			delete(s.nodes, n.name)
		}
	}
}

// settleSigs signs n's RRsets that are authoritative and were changed (or
// are not signed yet), and drops the signatures of those that are gone or
// no longer authoritative.
func (s *Signer) settleSigs(n *node, changed map[uint16]bool, now time.Time, d *Diff) {
	for t, sigs := range n.sigs {
		if len(n.sets[t]) == 0 || !s.signable(n, t) {
			d.Removed = append(d.Removed, sigs...)
			delete(n.sigs, t)
		}
	}
	for t, set := range n.sets {
		if s.signable(n, t) && (changed[t] || len(n.sigs[t]) == 0) {
			d.Removed = append(d.Removed, n.sigs[t]...)
			n.sigs[t] = s.sign(set, s.signers(n, t), now)
			d.Added = append(d.Added, n.sigs[t]...)
		}
	}
}

// remove takes n out of the chain, and returns its predecessor, whose
// record then names another successor (nil when the chain is empty).
func (s *Signer) remove(n *node, d *Diff) *node {
	i := s.index(n)
	s.chain = slices.Delete(s.chain, i, i+1)
	n.inChain = false
	d.Removed = append(d.Removed, n.denial)
	d.Removed = append(d.Removed, n.denialSigs...)
	n.denial, n.denialSigs = nil, nil
	if len(s.chain) == 0 {
		return nil
	}
	return s.chain[(i+len(s.chain)-1)%len(s.chain)]
}

// index returns the place of n, which is in the chain.
func (s *Signer) index(n *node) int {
	i, _ := slices.BinarySearchFunc(s.chain, n.order, func(x *node, o string) int { return strings.Compare(x.order, o) })
	return i
}

// updateDenial makes n's denial record what the chain and n's types say
// now, signed anew if it changed.
func (s *Signer) updateDenial(n *node, now time.Time, d *Diff) {
	next := s.chain[(s.index(n)+1)%len(s.chain)]
	rr := s.denialRecord(n, next)
	if n.denial != nil && n.denial.String() == rr.String() {
		return
	}
	if n.denial != nil {
		d.Removed = append(d.Removed, n.denial)
		d.Removed = append(d.Removed, n.denialSigs...)
	}
	n.denial = rr
	n.denialSigs = s.sign([]dns.RR{rr}, s.signers(n, rr.Header().Rrtype), now)
	d.Added = append(d.Added, rr)
	d.Added = append(d.Added, n.denialSigs...)
}

// denialRecord returns n's NSEC3 or NSEC record, with next its successor
// in the chain.
func (s *Signer) denialRecord(n, next *node) dns.RR {
	types := s.bitmap(n)
	if s.opts.NSEC {
		return &dns.NSEC{
			Hdr:        dns.RR_Header{Name: n.name, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: s.negativeTTL()},
			NextDomain: next.name,
			TypeBitMap: types,
		}
	}
	return &dns.NSEC3{
		Hdr:        dns.RR_Header{Name: strings.ToLower(n.order) + "." + s.origin, Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: s.negativeTTL()},
		Hash:       dns.SHA1,
		HashLength: 20,
		NextDomain: next.order,
		TypeBitMap: types,
	}
}

// bitmap returns the types of n's denial record: its authoritative types
// (NS and DS at a delegation), RRSIG if one of them is signed, and NSEC
// and RRSIG for NSEC, whose record is signed itself.
func (s *Signer) bitmap(n *node) []uint16 {
	var types []uint16
	signed := false
	for t := range n.sets {
		if s.isCut(n) && t != dns.TypeNS && t != dns.TypeDS {
			continue
		}
		types = append(types, t)
		signed = signed || s.signable(n, t)
	}
	if s.opts.NSEC {
		// The NSEC record itself is signed.
		types = append(types, dns.TypeNSEC, dns.TypeRRSIG)
	} else if signed {
		types = append(types, dns.TypeRRSIG)
	}
	slices.Sort(types)
	return types
}

// negativeTTL is the TTL of the denial records: the smaller of the SOA's
// TTL and its MINIMUM (RFC 9077), 300 s while the zone has no SOA.
func (s *Signer) negativeTTL() uint32 {
	if apex := s.nodes[s.origin]; apex != nil && len(apex.sets[dns.TypeSOA]) > 0 {
		if soa, ok := apex.sets[dns.TypeSOA][0].(*dns.SOA); ok {
			return min(soa.Hdr.Ttl, soa.Minttl)
		}
	}
	return 300
}
