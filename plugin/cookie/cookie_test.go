package cookie

import (
	"context"
	"encoding/hex"
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"

	"github.com/miekg/dns"
)

// testSecret is the secret of RFC 9018's first test vectors.
var testSecret = secret{0xe5, 0xe9, 0x73, 0xe5, 0xa6, 0xb2, 0xa4, 0x3f, 0x48, 0xe7, 0xdc, 0x84, 0x9e, 0x37, 0xbf, 0xcf}

// testClient is the address of test.ResponseWriter's client.
var testClient = netip.MustParseAddr("10.240.0.1")

// query returns an SOA query with EDNS and, unless cookie is empty, a
// COOKIE option of cookie (hex).
func query(cookie string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeSOA)
	m.SetEdns0(1232, true)
	if cookie != "" {
		opt := m.IsEdns0()
		opt.Option = append(opt.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie})
	}
	return m
}

// serve runs q through cookie above next, and returns the reply written and
// the rcode returned.
func serve(t *testing.T, q *dns.Msg, next plugin.HandlerFunc) (*dns.Msg, int) {
	t.Helper()
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	rcode, err := (&Cookie{Next: next, secret: testSecret}).ServeDNS(context.Background(), rec, q)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Msg, rcode
}

// answer is a backend that answers NOERROR, with the query's OPT record as
// CoreDNS's SizeAndDo puts it into the reply.
func answer(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	state := request.Request{W: w, Req: r}
	state.SizeAndDo(m)
	return dns.RcodeSuccess, w.WriteMsg(m)
}

// replyCookie returns the COOKIE option of m's OPT record, decoded, after
// checking that there is exactly one.
func replyCookie(t *testing.T, m *dns.Msg) []byte {
	t.Helper()
	opt := m.IsEdns0()
	if opt == nil {
		t.Fatalf("no OPT record:\n%v", m)
	}
	var cookies []string
	for _, o := range opt.Option {
		if c, ok := o.(*dns.EDNS0_COOKIE); ok {
			cookies = append(cookies, c.Cookie)
		}
	}
	if len(cookies) != 1 {
		t.Fatalf("%d COOKIE options, want 1:\n%v", len(cookies), m)
	}
	b, err := hex.DecodeString(cookies[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReplyCookie checks the COOKIE option of the reply to a query with a
// client cookie alone, and with a server cookie of its own: the client
// cookie, then a server cookie made now for it and the client's address.
// The reply's OPT record, which CoreDNS takes from the query, is a copy.
func TestReplyCookie(t *testing.T) {
	const client = "2464c4abcf10c957"
	for _, sent := range []string{client, client + "010000005cf79f111f8130c3eee29480", client + "0102030405060708"} {
		q := query(sent)
		before := time.Now()
		r, _ := serve(t, q, answer)
		got := replyCookie(t, r)
		if hex.EncodeToString(got[:clientCookieLen]) != client || len(got) != clientCookieLen+serverCookieLen {
			t.Fatalf("query's cookie %s: reply's %x, want %s and a server cookie", sent, got, client)
		}
		clientBytes, _ := hex.DecodeString(client)
		if !slices.ContainsFunc([]time.Time{before, time.Now()}, func(at time.Time) bool {
			return slices.Equal(got[clientCookieLen:], serverCookie(testSecret, clientBytes, testClient, at))
		}) {
			t.Errorf("query's cookie %s: server cookie %x is not ours for %s now", sent, got[clientCookieLen:], testClient)
		}
		if r.IsEdns0() == q.IsEdns0() {
			t.Error("the reply's OPT record, with the new cookie, is the query's")
		}
	}
}

// TestReplyWrittenAsBytes checks that a reply a plugin below writes as
// bytes gets its cookie too, and leaves as bytes.
func TestReplyWrittenAsBytes(t *testing.T) {
	const client = "2464c4abcf10c957"
	w := &wireWriter{}
	next := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(r)
		state := request.Request{W: w, Req: r}
		state.SizeAndDo(m)
		buf, err := m.Pack()
		if err != nil {
			return dns.RcodeServerFailure, err
		}
		_, err = w.Write(buf)
		return dns.RcodeSuccess, err
	})
	if _, err := (&Cookie{Next: next, secret: testSecret}).ServeDNS(context.Background(), w, query(client)); err != nil {
		t.Fatal(err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(w.wire); err != nil {
		t.Fatalf("no reply written as bytes: %v", err)
	}
	if got := replyCookie(t, r); hex.EncodeToString(got[:clientCookieLen]) != client || len(got) != clientCookieLen+serverCookieLen {
		t.Errorf("reply's cookie %x, want %s and a server cookie", got, client)
	}
}

// wireWriter keeps the bytes written to it.
type wireWriter struct {
	test.ResponseWriter
	wire []byte
}

// Write implements dns.ResponseWriter.
func (w *wireWriter) Write(buf []byte) (int, error) {
	w.wire = buf
	return len(buf), nil
}

// TestMalformed checks that a COOKIE option of a length RFC 7873 section
// 5.2.2 calls malformed gets FORMERR (written by the server) and goes no
// further.
func TestMalformed(t *testing.T) {
	for _, n := range []int{1, 7, 9, 15, 41} {
		r, rcode := serve(t, query(hex.EncodeToString(make([]byte, n))), func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
			t.Errorf("a cookie of %d bytes went on", n)
			return dns.RcodeSuccess, nil
		})
		if rcode != dns.RcodeFormatError || r != nil {
			t.Errorf("a cookie of %d bytes: rcode %s, reply %v; want FORMERR, no reply", n, dns.RcodeToString[rcode], r)
		}
	}
}

// TestNoCookie checks that a query without a COOKIE option gets the reply
// as the backend wrote it.
func TestNoCookie(t *testing.T) {
	r, _ := serve(t, query(""), answer)
	if cookieOption(r) != nil || r.IsEdns0() == nil {
		t.Errorf("want the backend's reply with its OPT record, no cookie:\n%v", r)
	}
}

// TestOPTBeforeTSIG checks a reply written without an OPT record and with a
// TSIG record: the new OPT record, like the query's, goes before the TSIG
// record, which stays last; a COOKIE option the reply had is replaced.
func TestOPTBeforeTSIG(t *testing.T) {
	r, _ := serve(t, query("2464c4abcf10c957"), func(_ context.Context, w dns.ResponseWriter, q *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.SetTsig("transfer.example.com.", dns.HmacSHA256, 300, time.Now().Unix())
		return dns.RcodeSuccess, w.WriteMsg(m)
	})
	if len(r.Extra) != 2 || r.IsTsig() == nil || r.IsEdns0() == nil || r.IsEdns0().UDPSize() != 1232 || !r.IsEdns0().Do() {
		t.Errorf("want an OPT record of 1232 bytes with DO, then the TSIG record:\n%v", r)
	}
	replyCookie(t, r)

	r, _ = serve(t, query("2464c4abcf10c957"), func(_ context.Context, w dns.ResponseWriter, q *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.SetEdns0(512, false)
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}}
		return dns.RcodeSuccess, w.WriteMsg(m)
	})
	if got := replyCookie(t, r); hex.EncodeToString(got[:clientCookieLen]) != "2464c4abcf10c957" {
		t.Errorf("the reply's own COOKIE option stayed: %x", got)
	}
}

// TestErrorReply checks the rcodes that the server answers itself when a
// plugin returns them without a reply: cookie writes that reply, with the
// query's question and OPT record and the cookie, and returns the plugin's
// error with RcodeSuccess, so that the server writes no other. Other rcodes,
// and the queries without a cookie, are returned as they are.
func TestErrorReply(t *testing.T) {
	failure := errors.New("upstream down")
	for _, rcode := range []int{dns.RcodeServerFailure, dns.RcodeRefused, dns.RcodeFormatError, dns.RcodeNotImplemented} {
		q := query("2464c4abcf10c957")
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		got, err := (&Cookie{Next: fails(rcode, failure), secret: testSecret}).ServeDNS(context.Background(), rec, q)
		if got != dns.RcodeSuccess || err != failure {
			t.Errorf("%s: returned %s, %v; want NOERROR (written) and the plugin's error", dns.RcodeToString[rcode], dns.RcodeToString[got], err)
		}
		r := rec.Msg
		if r == nil || r.Rcode != rcode || r.Id != q.Id || !r.Response || len(r.Question) != 1 || r.Question[0] != q.Question[0] {
			t.Fatalf("%s: want the reply to the query with that rcode:\n%v", dns.RcodeToString[rcode], r)
		}
		if r.IsEdns0().UDPSize() != 1232 || !r.IsEdns0().Do() {
			t.Errorf("%s: want the query's OPT record, 1232 bytes with DO:\n%v", dns.RcodeToString[rcode], r)
		}
		replyCookie(t, r)
	}

	for q, rcode := range map[*dns.Msg]int{
		query("2464c4abcf10c957"): dns.RcodeNameError,
		query(""):                 dns.RcodeServerFailure,
	} {
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		got, err := (&Cookie{Next: fails(rcode, failure), secret: testSecret}).ServeDNS(context.Background(), rec, q)
		if got != rcode || err != failure || rec.Msg != nil {
			t.Errorf("%s: returned %s, %v, wrote %v; want it returned as it is, nothing written", dns.RcodeToString[rcode], dns.RcodeToString[got], err, rec.Msg)
		}
	}
}

// fails is a backend that returns rcode and err without writing a reply.
func fails(rcode int, err error) plugin.HandlerFunc {
	return func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) { return rcode, err }
}
