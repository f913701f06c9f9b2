package etcdzone

import (
	"context"
	"strings"

	"github.com/coredns/coredns/plugin/file"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/request"

	"github.com/miekg/dns"
)

// answer returns the reply to state's query for a name in z, looked up in
// z's tree by the file plugin's lookup: RFC 1034's algorithm with CNAMEs
// followed within the zones, wildcards, empty non-terminals and
// delegations. A zone not loaded yet gets SERVFAIL.
func (x *EtcdZone) answer(ctx context.Context, state request.Request, z *zone) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(state.Req)
	v := z.current.Load()
	if v == nil {
		m.Rcode = dns.RcodeServerFailure
		return m
	}
	m.Authoritative = true
	if x.emptyNonTerminal(v, state.Name()) {
		// An empty non-terminal exists (RFC 4592, 2.2.2): NODATA, where the
		// file plugin's lookup would let a wildcard above it answer.
		m.Ns = []dns.RR{v.zone.SOA}
		return m
	}
	var result file.Result
	m.Answer, m.Ns, m.Extra, result = v.zone.Lookup(ctx, state, state.Name())
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
			m.Ns = []dns.RR{v.zone.SOA}
		}
	case file.NameError:
		m.Rcode = dns.RcodeNameError
	case file.Delegation:
		// A referral is not authoritative; an answer that reached it
		// through a CNAME is, for the CNAME.
		m.Authoritative = len(m.Answer) > 0
	case file.ServerFailure:
		m.Rcode = dns.RcodeServerFailure
	}
	return m
}

// emptyNonTerminal reports whether name, in v, has no records but names
// below it, outside any delegation.
func (x *EtcdZone) emptyNonTerminal(v *version, name string) bool {
	if x.delegated(name) {
		return false
	}
	if elem, ok := v.zone.Search(name); ok && !elem.Empty() {
		return false
	}
	next, ok := v.zone.Next(name)
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
// the plugin's zones is looked up at once, in the zone's current version;
// any other is asked of the whole server again (the etcd plugin and the
// file plugin do so too), where the view, if any, makes its answer the
// view's.
type chaser struct{ x *EtcdZone }

// Lookup implements file.Upstreamer.
func (c chaser) Lookup(ctx context.Context, state request.Request, name string, qtype uint16) (*dns.Msg, error) {
	if z := c.x.zoneOf(name); z != nil {
		return c.x.answer(ctx, state.NewWithQuestion(name, qtype), z), nil
	}
	return upstream.New().Lookup(ctx, state, name, qtype)
}
