package rrl

import (
	"context"
	"net/netip"

	"github.com/miekg/dns"
)

// ResponseWriter holds the reply written through it until the plugins below
// have returned, then accounts for it and sends it, sends it truncated (a
// slip) or drops it.
//
// Holding the reply rather than judging it inside the write has two reasons.
// The reply is final: nothing below can change it any more. And the reply
// is packed and sent from rrl's own frame, near the top of the query's
// goroutine stack, rather than from the bottom of the chain (the backend,
// then the ResponseWriters of globaladdr and cache, then rrl's): the
// deepest point of a query is then no deeper than it is without rrl, so rrl
// does not make the runtime grow (copy) every query's fresh stack once more
// (bench/HISTORY.md).
type ResponseWriter struct {
	dns.ResponseWriter
	rrl    *RRL
	ctx    context.Context
	prefix netip.Addr

	held *dns.Msg // the reply to judge and send on flush
	// written is set once a reply went through, sent or not.
	written bool
	// returned is set once the plugins below have returned: a reply
	// written after that is judged and sent at once.
	returned bool
}

// WriteMsg implements dns.ResponseWriter. It holds res until flush, after
// sending what it held before.
func (w *ResponseWriter) WriteMsg(res *dns.Msg) error {
	err := w.flush()
	w.held, w.written = res, true
	if w.returned {
		err = w.flush()
	}
	return err
}

// Write implements dns.ResponseWriter. A reply handed over as bytes (rare:
// CoreDNS's plugins write messages) is accounted like any other, at once,
// and sent as those bytes; one that cannot be read is not sent.
func (w *ResponseWriter) Write(buf []byte) (int, error) {
	res := new(dns.Msg)
	if err := res.Unpack(buf); err != nil {
		return 0, err
	}
	if err := w.flush(); err != nil {
		return 0, err
	}
	w.written = true
	return len(buf), w.send(res, buf)
}

// flush judges the reply held, if any, and sends it, its slip or nothing.
func (w *ResponseWriter) flush() error {
	res := w.held
	if res == nil {
		return nil
	}
	w.held = nil
	return w.send(res, nil)
}

// send judges res and sends it (as buf, if not nil), its slip or nothing.
func (w *ResponseWriter) send(res *dns.Msg, buf []byte) error {
	switch w.rrl.judge(w.ctx, w.prefix, res) {
	case send:
		if buf != nil {
			_, err := w.ResponseWriter.Write(buf)
			return err
		}
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
