package zone

import (
	"context"
	"slices"
	"strings"

	"github.com/coredns/coredns/plugin/file"
	"github.com/coredns/coredns/request"

	"github.com/miekg/dns"
)

// Answer returns the reply to state's query for a name in v, looked up in
// v's tree by the file plugin's lookup: RFC 1034's algorithm with CNAMEs
// followed (within the server's zones by the zone's Upstream), wildcards,
// empty non-terminals and delegations. served reports whether a name is in
// one of the server's zones, outside their delegations: a chain of CNAMEs
// that ends there without the type asked is NODATA.
func (v *Version) Answer(ctx context.Context, state request.Request, served func(name string) bool) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(state.Req)
	m.Authoritative = true
	if v.emptyNonTerminal(state.Name()) {
		// An empty non-terminal exists (RFC 4592, 2.2.2): NODATA, where the
		// file plugin's lookup would let a wildcard above it answer.
		m.Ns = []dns.RR{v.SOA()}
		return m
	}
	var result file.Result
	m.Answer, m.Ns, m.Extra, result = v.file.Lookup(ctx, state, state.Name())
	if loops(m.Answer) {
		// The file plugin's lookup gives up on a loop after 8 or 9
		// rounds, repeating the loop's records, with NOERROR if no
		// wildcard is in it.
		result = file.ServerFailure
	}
	switch result {
	case file.Success:
		if len(m.Answer) > 0 {
			// An answer carries no NS set in Authority, as Knot's and
			// BIND's answers to resolvers don't: it only makes answers
			// larger.
			m.Ns = nil
		}
		if endsInNoData(m.Answer, state.QType(), served) {
			// The CNAMEs lead to a name of the zones without records of
			// the type: NODATA, with the SOA for negative caching (RFC
			// 2308, 2.2).
			m.Ns = []dns.RR{v.SOA()}
		}
	case file.NameError:
		m.Rcode = dns.RcodeNameError
	case file.Delegation:
		// A referral is not authoritative; an answer that reached it
		// through a CNAME is, for the CNAME.
		m.Authoritative = len(m.Answer) > 0
		m.Extra = append(m.Extra, v.siblingGlue(m.Ns)...)
	case file.ServerFailure:
		// A CNAME loop: the chain up to the loop, each record once, and
		// nothing in Authority, as BIND answers it.
		m.Rcode = dns.RcodeServerFailure
		m.Answer = dns.Dedup(m.Answer, nil)
		m.Ns, m.Extra = nil, nil
	}
	return m
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

// siblingGlue returns the addresses v holds of the name servers of the
// referral ns that lie under another delegation of the zone than the one
// they serve, whose glue the referral has already: sibling glue, which
// BIND adds too.
func (v *Version) siblingGlue(ns []dns.RR) []dns.RR {
	var glue []dns.RR
	for _, rr := range ns {
		server, ok := rr.(*dns.NS)
		if !ok || dns.IsSubDomain(server.Hdr.Name, server.Ns) || !v.z.delegated(server.Ns) {
			continue
		}
		glue = append(glue, v.Addresses(server.Ns)...)
	}
	return glue
}

// Addresses returns the A and AAAA records v holds at name (lower case),
// below a delegation too (glue), in a slice of their own.
func (v *Version) Addresses(name string) []dns.RR {
	elem, ok := v.file.Search(name)
	if !ok {
		return nil
	}
	return slices.Concat(elem.Type(dns.TypeA), elem.Type(dns.TypeAAAA))
}

// emptyNonTerminal reports whether name, in v, has no records but names
// below it, outside any delegation.
func (v *Version) emptyNonTerminal(name string) bool {
	if v.z.delegated(name) {
		return false
	}
	if elem, ok := v.file.Search(name); ok && !elem.Empty() {
		return false
	}
	next, ok := v.file.Next(name)
	return ok && !strings.EqualFold(next.Name(), name) && dns.IsSubDomain(name, next.Name())
}

// delegated reports whether name is at or below one of z's cuts.
func (z *Zone) delegated(name string) bool {
	for _, cut := range z.Cuts {
		if dns.IsSubDomain(cut, name) {
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
