// Package cookie implements the cookie plugin: the server side of DNS
// Cookies (RFC 7873), with server cookies in the interoperable format of
// RFC 9018. A query carrying a COOKIE option gets its client cookie back
// with a fresh server cookie in every reply; a malformed option gets
// FORMERR.
package cookie

import (
	"context"
	"encoding/hex"
	"net/netip"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"

	"github.com/miekg/dns"
)

const pluginName = "cookie"

// Cookie is the cookie plugin's handler.
type Cookie struct {
	Next   plugin.Handler
	secret secret
}

// Name implements plugin.Handler.
func (*Cookie) Name() string { return pluginName }

// ServeDNS implements plugin.Handler. A query without a COOKIE option goes on
// as it is. One with a malformed option (RFC 7873 section 5.2.2: a client
// cookie that is not 8 bytes, or a server cookie outside 8 to 32 bytes) is
// answered FORMERR by the server. Any other goes on with a ResponseWriter
// that puts the client cookie and a new server cookie into the reply: the
// server cookie the query brought, valid or not, changes nothing (section
// 5.2.3 and 5.2.4: the query is answered as usual).
//
// A plugin below that returns an rcode the server answers itself (SERVFAIL,
// REFUSED, FORMERR, NOTIMP: see plugin.ClientWrite) gets that reply written
// here, through the ResponseWriter, since the server would write it past
// it. The plugin's error is returned with RcodeSuccess, which tells the
// server the reply is written, as plugin.BackendError does: the errors
// plugin logs it, with rcode 0.
func (c *Cookie) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	option := cookieOption(r)
	if option == nil {
		return plugin.NextOrFailure(c.Name(), c.Next, ctx, w, r)
	}
	return c.serveCookie(ctx, w, r, option)
}

// serveCookie serves r, a query with option, its COOKIE option: it is kept
// out of ServeDNS, whose frame every query without a cookie passes through
// (see etcdzone's reply).
func (c *Cookie) serveCookie(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, option *dns.EDNS0_COOKIE) (int, error) {
	cookie, err := hex.DecodeString(option.Cookie)
	if err != nil || !wellFormed(len(cookie)) {
		return dns.RcodeFormatError, nil
	}
	client := cookie[:clientCookieLen]
	state := request.Request{W: w, Req: r}
	addr, _ := netip.ParseAddr(state.IP())
	reply := append(client[:clientCookieLen:clientCookieLen], serverCookie(c.secret, client, addr, time.Now())...)
	w = &ResponseWriter{ResponseWriter: w, query: r.IsEdns0(), cookie: hex.EncodeToString(reply)}
	rcode, err := plugin.NextOrFailure(c.Name(), c.Next, ctx, w, r)
	if plugin.ClientWrite(rcode) {
		return rcode, err
	}
	writeError(w, r, rcode)
	return dns.RcodeSuccess, err
}

// writeError writes to w the reply CoreDNS's server writes for a plugin that
// returns rcode without writing one: the query's id, opcode and question with
// rcode, and the query's OPT record.
func writeError(w dns.ResponseWriter, r *dns.Msg, rcode int) {
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	state := request.Request{W: w, Req: r}
	state.SizeAndDo(m)
	w.WriteMsg(m)
}

// cookieOption returns the first COOKIE option of m's OPT record, or nil.
func cookieOption(m *dns.Msg) *dns.EDNS0_COOKIE {
	if opt := m.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if cookie, ok := o.(*dns.EDNS0_COOKIE); ok {
				return cookie
			}
		}
	}
	return nil
}

// wellFormed tells whether a COOKIE option of n bytes is a client cookie
// alone or one followed by a server cookie of a length RFC 7873 allows.
func wellFormed(n int) bool {
	server := n - clientCookieLen
	return server == 0 || (server >= minServerCookieLen && server <= maxServerCookieLen)
}
