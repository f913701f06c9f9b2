package rrl

import (
	"context"
	"net/netip"

	"github.com/miekg/dns"
)

// ResponseWriter accounts for the reply written through it, once the
// plugins below have made it what the client gets, and sends it, sends it
// truncated (a slip) or drops it.
type ResponseWriter struct {
	dns.ResponseWriter
	rrl    *RRL
	ctx    context.Context
	prefix netip.Addr
	// written is set once a reply went through, sent or not.
	written bool
}

// WriteMsg implements dns.ResponseWriter.
func (w *ResponseWriter) WriteMsg(res *dns.Msg) error {
	w.written = true
	switch w.rrl.judge(w.ctx, w.prefix, res) {
	case send:
		return w.ResponseWriter.WriteMsg(res)
	case slip:
		return w.ResponseWriter.WriteMsg(truncated(res))
	}
	return nil
}

// writeError writes the error reply with rcode that the server would write
// itself for a plugin that returned rcode without a reply, so that
// errors-per-second applies to it too. It returns the rcode to hand up: one
// that tells the server a reply went out.
func (w *ResponseWriter) writeError(req *dns.Msg, rcode int) int {
	m := new(dns.Msg)
	m.SetRcode(req, rcode)
	w.WriteMsg(m)
	return dns.RcodeSuccess
}

// Write implements dns.ResponseWriter. A reply handed over as bytes is
// accounted like any other; one that cannot be read is not sent.
func (w *ResponseWriter) Write(buf []byte) (int, error) {
	res := new(dns.Msg)
	if err := res.Unpack(buf); err != nil {
		return 0, err
	}
	w.written = true
	switch w.rrl.judge(w.ctx, w.prefix, res) {
	case send:
		return w.ResponseWriter.Write(buf)
	case slip:
		return len(buf), w.ResponseWriter.WriteMsg(truncated(res))
	}
	return len(buf), nil
}

// truncated returns the slip of res: its header with TC set, its question
// and its OPT record, nothing else, so that a genuine client retries over
// TCP. res is not changed.
func truncated(res *dns.Msg) *dns.Msg {
	m := &dns.Msg{MsgHdr: res.MsgHdr, Question: res.Question}
	m.Response, m.Truncated = true, true
	if opt := res.IsEdns0(); opt != nil {
		m.Extra = []dns.RR{opt}
	}
	return m
}
