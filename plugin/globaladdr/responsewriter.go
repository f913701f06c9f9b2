package globaladdr

import (
	"context"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"

	"github.com/miekg/dns"
)

// ResponseWriter rewrites every reply written through it into the external
// view before passing it on: the answer to a query, or each envelope of a
// zone transfer.
type ResponseWriter struct {
	dns.ResponseWriter
	g *GlobalAddr
	// addrs is the state of the global addresses every reply is rewritten
	// at: the one in use when the question came.
	addrs *outside.Globals
	ctx   context.Context
	req   *dns.Msg
	// given and sent count the records of a zone transfer's envelopes:
	// as the plugins below gave them, and as they left.
	given, sent int
}

// WriteMsg implements dns.ResponseWriter.
func (w *ResponseWriter) WriteMsg(res *dns.Msg) error {
	var t outside.Tally
	out, err := w.g.external(res, w.addrs, &t)
	if err != nil {
		log.Debugf("%s: SERVFAIL: %v", questionName(w.req), err)
		m := new(dns.Msg)
		m.SetRcode(w.req, dns.RcodeServerFailure)
		return w.ResponseWriter.WriteMsg(m)
	}
	report(w.ctx, &t)
	if isTransfer(w.req) {
		w.given += len(res.Answer)
		w.sent += len(out.Answer)
		return w.writeEnvelope(out)
	}
	if out != res && emptied(res, out) {
		// The question's name is gone from the view when all it held was
		// ownership records, or when its mark, read while the reply
		// waited for it (a new host), withholds it: NXDOMAIN, as the
		// question would have had if the mark had come first.
		w.deny(out, allRegistry(res.Answer) || w.g.unexposed(questionName(w.req)))
	}
	return w.ResponseWriter.WriteMsg(out)
}

// external returns the external view of res at addrs, counting in t what it
// changed: without the records the etcd plugin's marks withhold, if the
// block reads them, then rewritten by the policy.
func (g *GlobalAddr) external(res *dns.Msg, addrs *outside.Globals, t *outside.Tally) (*dns.Msg, error) {
	if em := g.etcdMarks.Load(); em != nil {
		var err error
		if res, err = em.filter(g.policy, res, t); err != nil {
			return nil, err
		}
	}
	return g.policy.Rewrite(res, addrs, t)
}

// writeEnvelope writes m, an envelope of a zone transfer, as it is, or, when
// the rewrite made it larger than a message can be (two global addresses
// double every rewritten A record), as two envelopes with half its records
// each, and so on: the envelopes are sized from the records sent.
func (w *ResponseWriter) writeEnvelope(m *dns.Msg) error {
	if len(m.Answer) < 2 || m.Len() <= dns.MaxMsgSize {
		return w.ResponseWriter.WriteMsg(m)
	}
	half := len(m.Answer) / 2
	for _, part := range [][]dns.RR{m.Answer[:half], m.Answer[half:]} {
		e := *m
		e.Answer = part
		// Each envelope carries its own TSIG record, which the server's
		// writer signs in turn, those after the first over the timers
		// alone (RFC 8945, 5.3.1).
		e.Extra = append([]dns.RR(nil), m.Extra...)
		if err := w.writeEnvelope(&e); err != nil {
			return err
		}
		w.ResponseWriter.TsigTimersOnly(true)
	}
	return nil
}

// Write implements dns.ResponseWriter. A reply handed over as bytes is
// rewritten like any other; one that cannot be read is not sent.
func (w *ResponseWriter) Write(buf []byte) (int, error) {
	m := new(dns.Msg)
	if err := m.Unpack(buf); err != nil {
		return 0, err
	}
	return len(buf), w.WriteMsg(m)
}

// deny turns out, a successful reply whose answer the rewrite emptied, into
// NODATA with the zone's SOA, or into NXDOMAIN when the view holds nothing
// at the question's name (never at the zone's apex, which exists).
func (w *ResponseWriter) deny(out *dns.Msg, nameless bool) {
	out.Ns = nil
	soa := w.g.soa(w.ctx, w.ResponseWriter, w.req, questionName(w.req))
	if soa != nil {
		out.Ns = []dns.RR{soa}
	}
	if nameless && (soa == nil || !strings.EqualFold(soa.Header().Name, questionName(w.req))) {
		out.Rcode = dns.RcodeNameError
	}
	extra := out.Extra
	out.Extra = nil
	for _, rr := range extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			out.Extra = append(out.Extra, rr)
		}
	}
}

// emptied reports whether the rewrite removed every record of a successful
// reply's answer.
func emptied(res, out *dns.Msg) bool {
	return res.Rcode == dns.RcodeSuccess && len(res.Answer) > 0 && len(out.Answer) == 0
}

func allRegistry(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if t, ok := rr.(*dns.TXT); !ok || !outside.IsRegistry(t) {
			return false
		}
	}
	return true
}

func isTransfer(r *dns.Msg) bool {
	if len(r.Question) == 0 {
		return false
	}
	t := r.Question[0].Qtype
	return t == dns.TypeAXFR || t == dns.TypeIXFR
}

func questionName(r *dns.Msg) string {
	if len(r.Question) == 0 {
		return "."
	}
	return r.Question[0].Name
}
