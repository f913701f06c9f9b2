package zone

import (
	"context"
	"slices"
	"strings"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/request"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// This file answers a query from a version: RFC 1034's algorithm (4.3.2)
// over the version's names, as an authoritative server answers. The
// sections of an answer are slices of the nodes' records, never copies but
// for a wildcard's, which take the query's name.

// result is what a lookup found.
type result int

const (
	success result = iota
	nameError
	delegation
	noData
	serverFailure
)

// maxChase bounds the CNAMEs of the zone an answer follows (up to 9 after
// the first) and the depth of the lookups that a chain of CNAMEs through
// other zones starts (a 9th fails), as the file plugin's lookup does.
const maxChase = 8

// Answer returns the reply to state's query for a name in v, with CNAMEs
// followed (within the server's zones by the zone's Upstream), wildcards,
// empty non-terminals and delegations. served reports whether a name is in
// one of the server's zones, outside their delegations: a chain of CNAMEs
// that ends there without the type asked is NODATA.
//
// The reply's sections share v's records and slices, which every query
// reads: whatever handles the reply may replace a section or a record, but
// must not write into them.
func (v *Version) Answer(ctx context.Context, state request.Request, served func(name string) bool) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(state.Req)
	m.Authoritative = true
	var res result
	m.Answer, m.Ns, m.Extra, res = v.lookup(ctx, &state, plain(state.Name()), state.QType())
	if loops(m.Answer) {
		res = serverFailure
	}
	switch res {
	case success:
		if endsInNoData(m.Answer, state.QType(), served) {
			// The CNAMEs lead to a name of the zones without records of
			// the type: NODATA, with the SOA for negative caching (RFC
			// 2308, 2.2).
			m.Ns = v.soaSet
		}
	case nameError:
		m.Rcode = dns.RcodeNameError
	case delegation:
		// A referral is not authoritative; an answer that reached it
		// through a CNAME is, for the CNAME.
		m.Authoritative = len(m.Answer) > 0
		m.Extra = append(m.Extra, v.siblingGlue(m.Ns)...)
	case serverFailure:
		// A CNAME loop: the chain up to the loop, each record once, and
		// nothing in Authority, as BIND answers it.
		m.Rcode = dns.RcodeServerFailure
		m.Answer = dns.Dedup(m.Answer, nil)
		m.Ns, m.Extra = nil, nil
	}
	return m
}

// lookup returns the Answer, Authority and Additional sections of the
// answer to qname (lower case) and qtype, and what it found. An answer
// carries no NS set in Authority, as Knot's and BIND's answers to resolvers
// don't: it only makes answers larger.
func (v *Version) lookup(ctx context.Context, state *request.Request, qname string, qtype uint16) (answer, ns, extra []dns.RR, res result) {
	n, found := v.names.byName[qname]
	if found && n == nil && v.cutAbove(qname, 0) == nil {
		// An empty non-terminal exists (RFC 4592, 2.2.2): NODATA.
		return nil, v.soaSet, nil, noData
	}
	if qname == v.z.Name {
		switch qtype {
		case dns.TypeSOA:
			return v.soaSet, nil, nil, success
		case dns.TypeNS:
			return v.ns, nil, v.glue(v.ns), success
		}
	}
	if chased(ctx) > maxChase {
		return nil, nil, nil, serverFailure
	}
	if cut := v.cutAbove(qname, qtype); cut != nil {
		ns := cut.typ(dns.TypeNS)
		return nil, ns, v.glue(ns), delegation
	}
	if n != nil {
		return v.fromNode(ctx, state, n, qname, qtype, false)
	}
	ce := v.names.closestEncloser(qname, v.z.Name)
	if w, ok := v.names.wildcards[ce]; ok {
		if w == nil {
			// The wildcard is an empty non-terminal.
			return nil, v.soaSet, nil, noData
		}
		return v.fromNode(ctx, state, w, qname, qtype, true)
	}
	return nil, v.soaSet, nil, nameError
}

// fromNode answers qname and qtype from n, qname's node, or the wildcard
// that stands for qname (then its records take qname as their name).
func (v *Version) fromNode(ctx context.Context, state *request.Request, n *node, qname string, qtype uint16, wildcard bool) (answer, ns, extra []dns.RR, res result) {
	if qtype != dns.TypeCNAME {
		if cname := n.typ(dns.TypeCNAME); len(cname) > 0 {
			if wildcard {
				cname = expand(cname, qname)
			}
			return v.chase(ctx, state, cname, qtype)
		}
	}
	rrs := n.typ(qtype)
	if len(rrs) == 0 {
		return nil, v.soaSet, nil, noData
	}
	if wildcard {
		rrs = expand(rrs, qname)
	}
	return rrs, nil, v.additional(rrs), success
}

// expand returns copies of rrs, a wildcard's records, named qname.
func expand(rrs []dns.RR, qname string) []dns.RR {
	out := make([]dns.RR, len(rrs))
	for i, rr := range rrs {
		out[i] = dns.Copy(rr)
		out[i].Header().Name = qname
	}
	return out
}

// chase follows the CNAMEs of first, the CNAME records of the name asked,
// through v and then, where they leave it, through the zone's Upstream, to
// the records of qtype at the end of the chain, or a referral on the way.
// A chain that comes back to a name it passed is found by Answer (loops),
// one of a name to itself here.
func (v *Version) chase(ctx context.Context, state *request.Request, first []dns.RR, qtype uint16) (answer, ns, extra []dns.RR, res result) {
	chain := slices.Clone(first)
	target := first[0].(*dns.CNAME).Target
	for i := 0; ; i++ {
		name := plain(strings.ToLower(target))
		if cut := v.cutAbove(name, qtype); cut != nil {
			ns := cut.typ(dns.TypeNS)
			return chain, ns, v.glue(ns), delegation
		}
		n := v.names.byName[name]
		if n == nil || qtype == dns.TypeNS || qtype == dns.TypeSOA && name == v.z.Name {
			return v.upstream(ctx, state, chain, target, qtype)
		}
		if i > maxChase {
			return chain, nil, v.additional(chain), success
		}
		cname := n.typ(dns.TypeCNAME)
		if len(cname) == 0 {
			chain = append(chain, n.typ(qtype)...)
			return chain, nil, v.additional(chain), success
		}
		if strings.EqualFold(cname[0].Header().Name, cname[0].(*dns.CNAME).Target) {
			// A CNAME to its own name can only loop.
			return nil, nil, nil, serverFailure
		}
		chain = append(chain, cname...)
		target = cname[0].(*dns.CNAME).Target
	}
}

// upstream completes chain, a chain of CNAMEs that leads out of v (or to
// its apex's NS or SOA records), with the answer of the zone's Upstream
// for target, one lookup deeper. The view's tunnel is not asked: the chain
// to it is the answer, and the resolver asks the tunnel's own servers.
func (v *Version) upstream(ctx context.Context, state *request.Request, chain []dns.RR, target string, qtype uint16) (answer, ns, extra []dns.RR, res result) {
	if v.State != nil && v.State.Tunnel != "" && strings.EqualFold(target, v.State.Tunnel) {
		return chain, nil, v.additional(chain), success
	}
	if v.z.Upstream == nil {
		return chain, nil, nil, serverFailure
	}
	ctx = context.WithValue(ctx, dnsserver.LoopKey{}, chased(ctx)+1)
	m, err := v.z.Upstream.Lookup(ctx, *state, target, qtype)
	switch {
	case err != nil:
		return chain, nil, nil, serverFailure
	case m == nil:
		return chain, nil, v.additional(chain), success
	}
	chain = append(chain, m.Answer...)
	switch {
	case m.Rcode == dns.RcodeNameError:
		return chain, v.soaSet, v.additional(chain), nameError
	case m.Rcode == dns.RcodeServerFailure:
		return chain, nil, nil, serverFailure
	case m.Rcode == dns.RcodeSuccess && len(m.Answer) == 0:
		return chain, v.soaSet, v.additional(chain), noData
	}
	// Anything else, a REFUSED for a target outside every zone served
	// here too, keeps NOERROR: the CNAME is the answer, and the resolver
	// chases the target itself.
	return chain, nil, v.additional(chain), success
}

// chased returns how many lookups deep ctx's query is: each chain of
// CNAMEs that leads out of a zone asks the next one deeper.
func chased(ctx context.Context) int {
	n, _ := ctx.Value(dnsserver.LoopKey{}).(int)
	return n
}

// cutAbove returns the node of the delegation that name lies at or below,
// the one nearest the apex; nil when none. A query for the DS records at a
// cut is the zone's own, not a referral.
func (v *Version) cutAbove(name string, qtype uint16) *node {
	for _, cut := range v.cuts {
		if dnsname.In(name, cut.name) && !(qtype == dns.TypeDS && name == cut.name) {
			return cut
		}
	}
	return nil
}

// glue returns the addresses v holds of the name servers of ns, an NS set,
// that lie below the name the set is at (for a referral, or the apex's NS
// answer).
func (v *Version) glue(ns []dns.RR) []dns.RR {
	return v.serverAddresses(ns, func(server *dns.NS) bool { return dns.IsSubDomain(server.Hdr.Name, server.Ns) })
}

// siblingGlue returns the addresses v holds of the name servers of the
// referral ns that lie under another delegation of the zone than the one
// they serve, whose glue the referral has already: sibling glue, which
// BIND adds too.
func (v *Version) siblingGlue(ns []dns.RR) []dns.RR {
	return v.serverAddresses(ns, func(server *dns.NS) bool {
		return !dns.IsSubDomain(server.Hdr.Name, server.Ns) && v.cutAbove(dns.CanonicalName(server.Ns), 0) != nil
	})
}

// serverAddresses returns the addresses v holds of the name servers of the
// NS records of ns that which reports.
func (v *Version) serverAddresses(ns []dns.RR, which func(*dns.NS) bool) []dns.RR {
	var out []dns.RR
	for _, rr := range ns {
		if server, ok := rr.(*dns.NS); ok && which(server) {
			out = append(out, v.Addresses(dns.CanonicalName(server.Ns))...)
		}
	}
	return out
}

// additional returns the addresses v holds of the in-zone targets of the
// MX, SRV, SVCB and HTTPS records of answer, each target's once: the
// Additional section that spares a resolver a query.
func (v *Version) additional(answer []dns.RR) []dns.RR {
	var extra []dns.RR
	var seen []string
	for _, rr := range answer {
		target := ""
		switch rr := rr.(type) {
		case *dns.SRV:
			target = rr.Target
		case *dns.MX:
			target = rr.Mx
		case *dns.SVCB:
			target = rr.Target
		case *dns.HTTPS:
			target = rr.Target
		}
		if target == "" {
			continue
		}
		target = strings.ToLower(target)
		if !dnsname.In(target, v.z.Name) || slices.Contains(seen, target) {
			continue
		}
		seen = append(seen, target)
		extra = append(extra, v.Addresses(target)...)
	}
	return extra
}

// Addresses returns the A and AAAA records v holds at name (lower case),
// below a delegation too (glue), in a slice of their own.
func (v *Version) Addresses(name string) []dns.RR {
	n := v.names.byName[name]
	if n == nil {
		return nil
	}
	return n.addresses()
}

// loops reports whether answer holds a CNAME to its own owner name or to
// that of a CNAME before it: a chain of CNAMEs that comes back where it
// passed.
func loops(answer []dns.RR) bool {
	var owners []string
	for _, rr := range answer {
		cname, ok := rr.(*dns.CNAME)
		if !ok {
			continue
		}
		owners = append(owners, cname.Hdr.Name)
		if slices.ContainsFunc(owners, func(o string) bool { return strings.EqualFold(o, cname.Target) }) {
			return true
		}
	}
	return false
}

// endsInNoData reports whether answer, an answer to a query of qtype, is a
// chain of CNAMEs alone, to a name that served reports.
func endsInNoData(answer []dns.RR, qtype uint16, served func(string) bool) bool {
	if len(answer) == 0 || qtype == dns.TypeCNAME || qtype == dns.TypeANY {
		return false
	}
	for _, rr := range answer {
		if rr.Header().Rrtype != dns.TypeCNAME {
			return false
		}
	}
	target := answer[len(answer)-1].(*dns.CNAME).Target
	return served(target)
}
