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
	var jobs []job
	for n, changed := range touched {
		jobs = s.settleSigs(n, changed, jobs, d)
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
			jobs = s.updateDenial(n, jobs, d)
		}
	}
	s.signAll(jobs, now, d)
	for n := range touched {
		if !n.has() && n.below == 0 && !n.inChain {
			delete(s.nodes, n.name)
		}
	}
}

// settleSigs adds to jobs the signing of n's RRsets that are
// authoritative and were changed (or are not signed yet), and drops the
// signatures of those that are gone or no longer authoritative.
func (s *Signer) settleSigs(n *node, changed map[uint16]bool, jobs []job, d *Diff) []job {
	for i := range n.sets {
		r := &n.sets[i]
		if len(r.rrs) == 0 || !s.signable(n, r.t) {
			d.Removed = append(d.Removed, r.sigs...)
			r.sigs = nil
		}
	}
	n.compact()
	for _, r := range n.sets {
		if s.signable(n, r.t) && (changed[r.t] || len(r.sigs) == 0) {
			jobs = append(jobs, s.resign(n, r.t, d))
		}
	}
	return jobs
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
// now, and adds its signing to jobs if it changed.
func (s *Signer) updateDenial(n *node, jobs []job, d *Diff) []job {
	next := s.chain[(s.index(n)+1)%len(s.chain)]
	rr := s.denialRecord(n, next)
	if n.denial != nil && sameDenial(n.denial, rr) {
		return jobs
	}
	if n.denial != nil {
		d.Removed = append(d.Removed, n.denial)
	}
	n.denial = rr
	d.Added = append(d.Added, rr)
	return append(jobs, s.resign(n, 0, d))
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
		Hdr:        dns.RR_Header{Name: dns.Fqdn(strings.ToLower(n.order) + "." + strings.TrimPrefix(s.origin, ".")), Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: s.negativeTTL()},
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
	for _, r := range n.sets {
		if len(r.rrs) == 0 || s.isCut(n) && r.t != dns.TypeNS && r.t != dns.TypeDS {
			continue
		}
		types = append(types, r.t)
		signed = signed || s.signable(n, r.t)
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
	if apex := s.nodes[s.origin]; apex != nil {
		return negativeTTL(apex.records(dns.TypeSOA))
	}
	return negativeTTL(nil)
}

// negativeTTL returns the denial records' TTL that the SOA RRset soa
// gives.
func negativeTTL(soa []dns.RR) uint32 {
	if len(soa) > 0 {
		if x, ok := soa[0].(*dns.SOA); ok {
			return min(x.Hdr.Ttl, x.Minttl)
		}
	}
	return 300
}

// sameDenial reports whether the denial records a and b are the same: the
// same owner, TTL, next name and types.
func sameDenial(a, b dns.RR) bool {
	if a.Header().Name != b.Header().Name || a.Header().Ttl != b.Header().Ttl {
		return false
	}
	switch x := a.(type) {
	case *dns.NSEC:
		y := b.(*dns.NSEC)
		return x.NextDomain == y.NextDomain && slices.Equal(x.TypeBitMap, y.TypeBitMap)
	case *dns.NSEC3:
		y := b.(*dns.NSEC3)
		return x.NextDomain == y.NextDomain && slices.Equal(x.TypeBitMap, y.TypeBitMap)
	}
	return false
}
