package outside

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// This file holds what the rewrite of a section does over its records'
// RRsets, once each record is judged: drop repeated addresses, give each
// RRset one TTL, and remove the signatures that no longer verify.

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

// dropStaleSignatures removes from out, the external view of rrs, the
// RRSIGs over an RRset of rrs a record of which was rewritten or removed:
// they no longer verify. Signed sections are rare, so it judges again
// rather than have every rewrite remember what changed.
func (p *Policy) dropStaleSignatures(out, rrs []dns.RR) []dns.RR {
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
