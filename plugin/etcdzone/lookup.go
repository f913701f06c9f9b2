package etcdzone

import (
	"context"
	"slices"
	"strings"

	"github.com/coredns/coredns/plugin/file"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/request"

	"github.com/miekg/dns"
)

// answer returns the reply to state's query for a name in z, looked up in
// z's tree by the file plugin's lookup: RFC 1034's algorithm with CNAMEs
// followed within the zones, wildcards, empty non-terminals and
// delegations. A zone not loaded yet gets SERVFAIL. The caller holds x.mu for
// reading.
func (x *EtcdZone) answer(ctx context.Context, state request.Request, z *zone) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(state.Req)
	if z.data == nil {
		m.Rcode = dns.RcodeServerFailure
		return m
	}
	m.Authoritative = true
	if x.emptyNonTerminal(z, state.Name()) {
		// An empty non-terminal exists (RFC 4592, 2.2.2): NODATA, where the
		// file plugin's lookup would let a wildcard above it answer.
		m.Ns = []dns.RR{z.data.zone.SOA}
		return m
	}
	var result file.Result
	m.Answer, m.Ns, m.Extra, result = z.data.zone.Lookup(ctx, state, state.Name())
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
		if x.endsInNoData(m.Answer, state.QType()) {
			// The CNAMEs lead to a name of the zones without records of
			// the type: NODATA, with the SOA for negative caching (RFC
			// 2308, 2.2).
			m.Ns = []dns.RR{z.data.zone.SOA}
		}
	case file.NameError:
		m.Rcode = dns.RcodeNameError
	case file.Delegation:
		// A referral is not authoritative; an answer that reached it
		// through a CNAME is, for the CNAME.
		m.Authoritative = len(m.Answer) > 0
		m.Extra = append(m.Extra, x.siblingGlue(z, m.Ns)...)
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

// siblingGlue returns the addresses z holds of the name servers of the
// referral ns that lie under another delegation of the zone than the one
// they serve, whose glue the referral has already: sibling glue, which
// BIND adds too.
func (x *EtcdZone) siblingGlue(z *zone, ns []dns.RR) []dns.RR {
	var glue []dns.RR
	for _, rr := range ns {
		server, ok := rr.(*dns.NS)
		if !ok || inZone(server.Ns, server.Hdr.Name) || !x.delegated(server.Ns) {
			continue
		}
		if elem, ok := z.data.zone.Search(server.Ns); ok {
			glue = append(glue, elem.Type(dns.TypeA)...)
			glue = append(glue, elem.Type(dns.TypeAAAA)...)
		}
	}
	return glue
}

// emptyNonTerminal reports whether name, in z, has no records but names
// below it, outside any delegation.
func (x *EtcdZone) emptyNonTerminal(z *zone, name string) bool {
	if x.delegated(name) {
		return false
	}
	if elem, ok := z.data.zone.Search(name); ok && !elem.Empty() {
		return false
	}
	next, ok := z.data.zone.Next(name)
	return ok && !strings.EqualFold(next.Name(), name) && dns.IsSubDomain(name, next.Name())
}

// delegated reports whether name is at or below one of the Corefile's
// delegations.
func (x *EtcdZone) delegated(name string) bool {
	for _, d := range x.delegations {
		if inZone(name, d.name) {
			return true
		}
	}
	return false
}

// endsInNoData reports whether answer, an answer to a query of qtype, is a
// chain of CNAMEs alone, to a name in x's zones that is not delegated.
func (x *EtcdZone) endsInNoData(answer []dns.RR, qtype uint16) bool {
	if len(answer) == 0 || qtype == dns.TypeCNAME || qtype == dns.TypeANY {
		return false
	}
	for _, rr := range answer {
		if rr.Header().Rrtype != dns.TypeCNAME {
			return false
		}
	}
	target := answer[len(answer)-1].(*dns.CNAME).Target
	return x.zoneOf(target) != nil && !x.delegated(target)
}

// chaser is the Upstream of the zones' lookups: where a CNAME leads out of
// the zone's tree, the lookup asks it for the target. A target in one of
// the plugin's zones is looked up at once, under x.mu as the lookup already
// holds it; any other is asked of the whole server again (the etcd plugin
// and the file plugin do so too), with x.mu released meanwhile, so that a
// slow forwarder never holds back the changes from etcd.
type chaser struct{ x *EtcdZone }

// Lookup implements file.Upstreamer. Its caller holds x.mu for reading.
func (c chaser) Lookup(ctx context.Context, state request.Request, name string, qtype uint16) (*dns.Msg, error) {
	if z := c.x.zoneOf(name); z != nil {
		return c.x.answer(ctx, state.NewWithQuestion(name, qtype), z), nil
	}
	c.x.mu.RUnlock()
	defer c.x.mu.RLock()
	return upstream.New().Lookup(ctx, state, name, qtype)
}
