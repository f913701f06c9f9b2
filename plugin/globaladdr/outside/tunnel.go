package outside

import (
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// This file holds what a tunnel does (Options.Tunnel): a name whose
// addresses the view would rewrite is reached, outside, through a tunnel or
// a relay, and stands there as a CNAME to the tunnel's host name alone
// (RFC 1034 section 3.6.2, RFC 2181 section 10.1: a CNAME has no other data
// at its owner).

// ShowOwner returns what the view shows at g of rrs, the records of one
// owner name at at: Show's records, or, through the tunnel, the CNAME to the
// tunnel alone at a name that would show a rewritten address. A name goes
// through the tunnel when its route says so, or, when the view's tunnel
// takes every name, unless its route asks for the address; a route that
// names no target the view has withholds the name (nothing shown). A name
// that can't be an alias, or that has a CNAME or NS records of its own,
// keeps them: through the tunnel, its internal addresses are left out, and
// the rest is shown as Show shows it. rrs is returned itself when no record
// needs to change; it and its records are never modified.
func (p *Policy) ShowOwner(rrs []dns.RR, g *Globals, at horizon.Place) []dns.RR {
	switch tunnelled, ok := p.routes(at.Route); {
	case !ok:
		return nil
	case !tunnelled || !p.tunnels(rrs):
		return p.Show(rrs, g)
	case !at.Alias || hasType(rrs, dns.TypeNS) || hasType(rrs, dns.TypeCNAME):
		return p.Show(p.withoutAddrs(rrs), g)
	}
	return []dns.RR{p.cname(rrs)}
}

// routes reports whether the view takes a name routed r through its tunnel;
// ok is false when r names a target the view does not have (a mark naming
// none, or "tunnel" in a view without one): the name is withheld.
func (p *Policy) routes(r horizon.Route) (tunnelled, ok bool) {
	switch r {
	case horizon.ViewRoute:
		return p.tunnel != "" && !p.tunnelMarked, true
	case horizon.TunnelRoute:
		return true, p.tunnel != ""
	case horizon.AddressRoute:
		return false, true
	}
	return false, false
}

// CountOwner counts in t what the view does to rrs, records of one owner
// name at at (those of one type, as a question asks), as ShowOwner shows
// them: a withheld name's records as unrouted; through the tunnel, each
// internal address as tunnelled where the name is the CNAME, and dropped
// where it can't be one; else as Count counts each record.
func (p *Policy) CountOwner(rrs []dns.RR, g *Globals, at horizon.Place, t *Tally) {
	tunnelled, ok := p.routes(at.Route)
	if !ok {
		t.Unrouted += len(rrs)
		return
	}
	for _, rr := range rrs {
		switch {
		case !tunnelled || p.judge(rr) != rewriteAddr:
			p.Count(rr, g, t)
		case at.Alias:
			t.Tunnelled++
		default:
			t.droppedRR(rr)
		}
	}
}

// tunnels reports whether rrs, the records of one owner name, hold an
// internal address that the view would rewrite: a name the tunnel covers.
// A hidden name's records are removed before they are judged by type, and
// are never covered.
func (p *Policy) tunnels(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if p.judge(rr) == rewriteAddr {
			return true
		}
	}
	return false
}

// cname returns the CNAME to the tunnel that stands for rrs, the records of
// one owner name, at least one of which holds an internal address: at the
// owner name of the first, with the view's TTL, or the lowest TTL of the
// internal addresses when the view keeps the backend's.
func (p *Policy) cname(rrs []dns.RR) *dns.CNAME {
	hdr := dns.RR_Header{Name: rrs[0].Header().Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET}
	if p.ttl >= 0 {
		hdr.Ttl = uint32(p.ttl)
	} else {
		first := true
		for _, rr := range rrs {
			if p.judge(rr) == rewriteAddr && (first || rr.Header().Ttl < hdr.Ttl) {
				hdr.Ttl, first = rr.Header().Ttl, false
			}
		}
	}
	return &dns.CNAME{Hdr: hdr, Target: p.tunnel}
}

// withoutAddrs returns rrs without its internal addresses, in a slice of
// its own.
func (p *Policy) withoutAddrs(rrs []dns.RR) []dns.RR {
	out := make([]dns.RR, 0, len(rrs))
	for _, rr := range rrs {
		if p.judge(rr) != rewriteAddr {
			out = append(out, rr)
		}
	}
	return out
}

// hasType reports whether rrs hold a record of type typ.
func hasType(rrs []dns.RR, typ uint16) bool {
	for _, rr := range rrs {
		if rr.Header().Rrtype == typ {
			return true
		}
	}
	return false
}

// Tunnel returns the host name that the names the view takes through its
// tunnel stand for, as CNAMEs, outside; "" when it has none.
func (p *Policy) Tunnel() string { return p.tunnel }
