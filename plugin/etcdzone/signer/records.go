package signer

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Records returns the signed zone: every RRset as given (glue included),
// the apex's key records, the signatures and the denial chain; the SOA
// first, then by name in canonical order. The records are the signer's
// own: copy one before changing it.
func (s *Signer) Records() []dns.RR {
	names := make([]*node, 0, len(s.nodes))
	for _, n := range s.nodes {
		names = append(names, n)
	}
	keys := make(map[*node]string, len(names))
	for _, n := range names {
		keys[n] = orderKey(n.name)
	}
	slices.SortFunc(names, func(a, b *node) int { return strings.Compare(keys[a], keys[b]) })
	var out []dns.RR
	if apex := s.nodes[s.origin]; apex != nil {
		out = append(out, apex.records(dns.TypeSOA)...)
	}
	for _, n := range names {
		for _, r := range n.sets {
			if n.name != s.origin || r.t != dns.TypeSOA {
				out = append(out, r.rrs...)
			}
		}
		for _, r := range n.sets {
			out = append(out, r.sigs...)
		}
		if n.denial != nil {
			out = append(out, n.denial)
			out = append(out, n.denialSigs...)
		}
	}
	return out
}

// RRSIGs returns the signatures of name's RRset of type t (none if it is
// not signed), for an answer to a query with DO.
func (s *Signer) RRSIGs(name string, t uint16) []dns.RR {
	if n := s.lookup(name); n != nil {
		if r := n.get(t); r != nil {
			return r.sigs
		}
	}
	return nil
}

// Denial returns the NSEC3 (or NSEC) record of name with its signatures:
// what proves that name has no records of a type (NODATA), or none beside
// a delegation's NS. None if name is not in the chain.
func (s *Signer) Denial(name string) []dns.RR {
	if n := s.lookup(name); n != nil && n.denial != nil {
		return append([]dns.RR{n.denial}, n.denialSigs...)
	}
	return nil
}

// Cover returns the NSEC3 (or NSEC) record, with its signatures, whose
// interval covers name, a name not in the chain: what proves it does not
// exist (for NSEC3, give the next closer name and the wildcard at the
// closest encloser, RFC 5155 section 7.2.2).
func (s *Signer) Cover(name string) []dns.RR {
	c, ok := canonical(name)
	if !ok || len(s.chain) == 0 {
		return nil
	}
	order := orderKey(c)
	if !s.opts.NSEC {
		order = dns.HashName(c, dns.SHA1, 0, "")
	}
	i, _ := slices.BinarySearchFunc(s.chain, order, func(x *node, o string) int { return strings.Compare(x.order, o) })
	n := s.chain[(i+len(s.chain)-1)%len(s.chain)]
	return append([]dns.RR{n.denial}, n.denialSigs...)
}

// lookup returns the node of name, nil if there is none.
func (s *Signer) lookup(name string) *node {
	c, ok := canonical(name)
	if !ok {
		return nil
	}
	return s.nodes[c]
}

// Sets groups rrs into RRsets by owner and type, in the order they first
// appear: the changes that load a whole zone with Apply.
func Sets(rrs []dns.RR) []RRset {
	type key struct {
		name string
		t    uint16
	}
	var out []RRset
	index := map[key]int{}
	for _, rr := range rrs {
		name, _ := canonical(rr.Header().Name)
		k := key{name, rr.Header().Rrtype}
		if _, ok := index[k]; !ok {
			index[k] = len(out)
			out = append(out, RRset{Name: rr.Header().Name, Type: rr.Header().Rrtype})
		}
		out[index[k]].RRs = append(out[index[k]].RRs, rr)
	}
	return out
}
