package tsigtime

import (
	"context"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"
	_ "github.com/coredns/coredns/plugin/tsig"

	"github.com/miekg/dns"
)

// The key of the tsig plugin these tests run behind.
const (
	keyName = "transfer.example.com."
	secret  = "Y2lAUHa6tPH4+aaV8JQGcmlrTN9zBN9P7/TxTSKGLOk="
)

// writer is a ResponseWriter whose TSIG status the test sets, as the server
// sets it from the query, and which keeps what is written to it: a message
// to be packed (and signed) below, or bytes.
type writer struct {
	test.ResponseWriter
	status error
	msg    *dns.Msg
	wire   []byte
}

func (w *writer) TsigStatus() error { return w.status }

func (w *writer) WriteMsg(m *dns.Msg) error {
	w.msg = m
	return nil
}

func (w *writer) Write(b []byte) (int, error) {
	w.wire = b
	return len(b), nil
}

// chain returns tsigtime above CoreDNS's tsig plugin, set up from the
// Corefile lines tsig (which name the zone: the test controller has no
// server block keys), above a backend that answers every query NOERROR.
func chain(t *testing.T, tsig string) plugin.Handler {
	t.Helper()
	setupTSIG, err := caddy.DirectiveAction("dns", "tsig")
	if err != nil {
		t.Fatal(err)
	}
	c := caddy.NewTestController("dns", tsig)
	if err := setupTSIG(c); err != nil {
		t.Fatal(err)
	}
	backend := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(r)
		return dns.RcodeSuccess, w.WriteMsg(m)
	})
	return TSIGTime{Next: dnsserver.GetConfig(c).Plugin[0](backend)}
}

// signedQuery returns the SOA query of example.com., with a TSIG record of
// key at signed (with fudge 300) and a MAC.
func signedQuery(key string, signed time.Time) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeSOA)
	m.SetTsig(key, dns.HmacSHA256, 300, signed.Unix())
	m.IsTsig().MAC = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	m.IsTsig().MACSize = 32
	return m
}

// TestUnsignedErrors checks the answers to a query signed with a key the
// server does not know and to one whose MAC does not verify: NOTAUTH, packed
// by tsigtime with an unsigned TSIG record of the error, signed now with
// the query's fudge.
func TestUnsignedErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status error
		want   uint16
	}{
		{"unknown key", dns.ErrSecret, dns.RcodeBadKey},
		{"bad MAC", dns.ErrSig, dns.RcodeBadSig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writer{status: tc.status}
			q := signedQuery(keyName, time.Now())
			q.IsTsig().Fudge = 10
			before := time.Now().Unix()
			if _, err := chain(t, "tsig example.com {\n secret "+keyName+" "+secret+"\n}").ServeDNS(context.Background(), w, q); err != nil {
				t.Fatal(err)
			}
			if w.msg != nil || w.wire == nil {
				t.Fatalf("the answer went below as a message, not as tsigtime's bytes: %v", w.msg)
			}
			r := new(dns.Msg)
			if err := r.Unpack(w.wire); err != nil {
				t.Fatal(err)
			}
			got := r.IsTsig()
			if r.Rcode != dns.RcodeNotAuth || got == nil {
				t.Fatalf("want NOTAUTH with a TSIG record:\n%v", r)
			}
			if got.Error != tc.want || got.MACSize != 0 || got.MAC != "" || got.Hdr.Name != keyName || got.OrigId != q.Id || got.Fudge != 10 {
				t.Errorf("want an unsigned TSIG record of %s, key %s, id %d, fudge 10:\n%v", dns.RcodeToString[int(tc.want)], keyName, q.Id, got)
			}
			if signed := int64(got.TimeSigned); signed < before || signed > time.Now().Unix() {
				t.Errorf("time signed %d, want now (%d)", signed, before)
			}
		})
	}
}

// TestNoKeys checks tsig without keys, as the Internet-facing examples have
// it: genreport's query, signed by the key "." with a secret of zeros, gets
// BADKEY, with the default fudge for a query whose fudge is 0.
func TestNoKeys(t *testing.T) {
	w := &writer{status: dns.ErrSecret}
	q := signedQuery(".", time.Now())
	q.IsTsig().Fudge = 0
	if _, err := chain(t, "tsig example.com").ServeDNS(context.Background(), w, q); err != nil {
		t.Fatal(err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(w.wire); err != nil {
		t.Fatal(err)
	}
	if got := r.IsTsig(); r.Rcode != dns.RcodeNotAuth || got == nil || got.Error != dns.RcodeBadKey || got.Fudge != defaultFudge {
		t.Errorf("want NOTAUTH, BADKEY, fudge %d:\n%v", defaultFudge, r)
	}
}

// TestSignedAnswers checks that the answers tsig signs go below as
// messages, to be signed there: a verified query's, and BADTIME's (signed
// by RFC 8945), whose time tsig sets.
func TestSignedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status error
		want   int
	}{
		{"verified", nil, dns.RcodeSuccess},
		{"time outside the fudge", dns.ErrTime, dns.RcodeNotAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writer{status: tc.status}
			if _, err := chain(t, "tsig example.com {\n secret "+keyName+" "+secret+"\n}").ServeDNS(context.Background(), w, signedQuery(keyName, time.Now())); err != nil {
				t.Fatal(err)
			}
			if w.wire != nil || w.msg == nil || w.msg.Rcode != tc.want || w.msg.IsTsig() == nil {
				t.Errorf("want a %s message with a TSIG record, to be signed below; got %v, %d bytes", dns.RcodeToString[tc.want], w.msg, len(w.wire))
			}
		})
	}
}

// TestUnsignedQuery checks that an unsigned query's answer goes on as it
// is.
func TestUnsignedQuery(t *testing.T) {
	w := &writer{}
	q := new(dns.Msg)
	q.SetQuestion("example.com.", dns.TypeSOA)
	if _, err := chain(t, "tsig example.com").ServeDNS(context.Background(), w, q); err != nil {
		t.Fatal(err)
	}
	if w.wire != nil || w.msg == nil || w.msg.Rcode != dns.RcodeSuccess || w.msg.IsTsig() != nil {
		t.Errorf("want the backend's answer as it is, got %v", w.msg)
	}
}

// TestUnsignedPacksErrors checks that a reply that cannot be packed is an
// error, not bytes.
func TestUnsignedPacksErrors(t *testing.T) {
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeSOA)
	m.Extra = []dns.RR{&dns.TSIG{Hdr: dns.RR_Header{Name: keyName, Rrtype: dns.TypeTSIG, Class: dns.ClassANY}, Algorithm: "bad..name", Error: dns.RcodeBadKey}}
	if _, err := unsigned(m, 300, time.Now()); err == nil {
		t.Error("a TSIG record with a bad algorithm name packed")
	}
}

// TestErrorWrittenAsBytes checks a reply that a plugin below writes as
// bytes: one whose TSIG record carries BADSIG is packed by tsigtime, stamped
// now; any other leaves as the bytes it was.
func TestErrorWrittenAsBytes(t *testing.T) {
	for _, tsigErr := range []uint16{dns.RcodeBadSig, dns.RcodeSuccess} {
		q := signedQuery(keyName, time.Now())
		reply := new(dns.Msg)
		reply.SetReply(q)
		reply.SetTsig(keyName, dns.HmacSHA256, 300, 0)
		reply.IsTsig().Error = tsigErr
		buf, err := reply.Pack()
		if err != nil {
			t.Fatal(err)
		}
		backend := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, _ *dns.Msg) (int, error) {
			_, err := w.Write(buf)
			return dns.RcodeSuccess, err
		})
		w := &writer{}
		before := time.Now().Unix()
		if _, err := (TSIGTime{Next: backend}).ServeDNS(context.Background(), w, q); err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(w.wire); err != nil {
			t.Fatalf("TSIG error %s: no reply written as bytes: %v", dns.RcodeToString[int(tsigErr)], err)
		}
		signed := int64(r.IsTsig().TimeSigned)
		if stamped := signed >= before; stamped != (tsigErr == dns.RcodeBadSig) {
			t.Errorf("TSIG error %s: time signed %d, stamped now: %v", dns.RcodeToString[int(tsigErr)], signed, stamped)
		}
	}
}
