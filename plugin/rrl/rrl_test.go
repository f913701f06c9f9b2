package rrl

import (
	"context"
	"net"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/miekg/dns"
)

// client is a dns.ResponseWriter of a client at a fixed address, which
// keeps the last reply written to it and counts them.
type client struct {
	test.ResponseWriter
	addr    net.Addr
	last    *dns.Msg
	replies int
}

func udpClient(ip string) *client {
	return &client{addr: &net.UDPAddr{IP: net.ParseIP(ip), Port: 40212}}
}

func tcpClient(ip string) *client {
	return &client{addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40212}}
}

func (c *client) RemoteAddr() net.Addr { return c.addr }

func (c *client) WriteMsg(m *dns.Msg) error {
	c.last, c.replies = m, c.replies+1
	return nil
}

// answer is a backend that answers every query with one A record, written
// as a message.
var answer = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(203, 0, 113, 10)}}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
})

// newTestRRL returns rrl as the Corefile input configures it, above next.
func newTestRRL(t testing.TB, input string, next plugin.Handler) *RRL {
	t.Helper()
	cfg, err := parse(caddy.NewTestController("dns", input))
	if err != nil {
		t.Fatal(err)
	}
	r := newRRL(cfg)
	r.Next = next
	return r
}

func ask(t testing.TB, r *RRL, c dns.ResponseWriter, name string) int {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, dns.TypeA)
	rc, err := r.ServeDNS(context.Background(), c, q)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// burst asks name n times from c and returns how many replies were full
// answers and how many truncated.
func burst(t testing.TB, r *RRL, c *client, name string, n int) (full, truncated int) {
	t.Helper()
	for range n {
		before := c.replies
		ask(t, r, c, name)
		switch {
		case c.replies == before:
		case c.last.Truncated:
			truncated++
			if len(c.last.Answer) != 0 || len(c.last.Question) != 1 || c.last.Question[0].Name != name || !c.last.Response {
				t.Errorf("a slip is not an empty truncated reply to the question:\n%v", c.last)
			}
		default:
			full++
		}
	}
	return full, truncated
}

func TestServeDNSLimits(t *testing.T) {
	r := newTestRRL(t, "rrl {\n responses-per-second 5\n slip 3\n exempt-clients 192.0.2.0/24\n}", answer)

	// One prefix, 50 queries at once: 5 answers, then every 3rd of the 45
	// others slips.
	if full, tc := burst(t, r, udpClient("198.51.100.7"), "app.example.com.", 50); full != 5 || tc != 15 {
		t.Errorf("one client: %d answers, %d slips; want 5 and 15", full, tc)
	}
	// Another host of the same /24 shares the account.
	if full, _ := burst(t, r, udpClient("198.51.100.8"), "app.example.com.", 5); full != 0 {
		t.Errorf("the same /24: %d answers, want none", full)
	}
	// Another name has its own account.
	if full, _ := burst(t, r, udpClient("198.51.100.8"), "www.example.com.", 5); full != 5 {
		t.Errorf("another name: %d answers, want 5", full)
	}
	// Another /24, TCP, and exempt clients are answered.
	for name, c := range map[string]*client{
		"another /24": udpClient("198.51.101.7"),
		"TCP":         tcpClient("198.51.100.7"),
		"exempt":      udpClient("192.0.2.7"),
	} {
		n := 5
		if name != "another /24" {
			n = 50
		}
		if full, _ := burst(t, r, c, "app.example.com.", n); full != n {
			t.Errorf("%s: %d answers of %d", name, full, n)
		}
	}
}

func TestServeDNSIPv6Prefix(t *testing.T) {
	r := newTestRRL(t, "rrl {\n responses-per-second 2\n slip 0\n}", answer)
	burst(t, r, udpClient("2001:db8:0:ff::1"), "app.example.com.", 10) // 2001:db8::/56
	if full, _ := burst(t, r, udpClient("2001:db8:0:ab::2"), "app.example.com.", 2); full != 0 {
		t.Errorf("the same /56: %d answers, want none", full)
	}
	if full, _ := burst(t, r, udpClient("2001:db8:0:100::1"), "app.example.com.", 2); full != 2 {
		t.Errorf("another /56: %d answers, want 2", full)
	}
}

func TestServeDNSLogOnly(t *testing.T) {
	r := newTestRRL(t, "rrl {\n responses-per-second 1\n log-only\n}", answer)
	if full, _ := burst(t, r, udpClient("203.0.113.1"), "app.example.com.", 20); full != 20 {
		t.Errorf("log-only: %d answers of 20", full)
	}
}

func TestServeDNSAllPerSecond(t *testing.T) {
	// all-per-second limits whatever the class and name, and never slips.
	r := newTestRRL(t, "rrl {\n all-per-second 4\n slip 1\n}", answer)
	c := udpClient("203.0.113.1")
	var full, tc int
	for _, name := range []string{"a.example.com.", "b.example.com.", "c.example.com.", "d.example.com.", "e.example.com.", "f.example.com."} {
		f, s := burst(t, r, c, name, 1)
		full, tc = full+f, tc+s
	}
	if full != 4 || tc != 0 {
		t.Errorf("%d answers and %d slips over all-per-second 4, want 4 and none", full, tc)
	}
}

func TestServeDNSErrors(t *testing.T) {
	// A plugin that returns SERVFAIL without a reply: rrl writes the reply,
	// and errors-per-second applies to it; the server must not write
	// another.
	fail := plugin.HandlerFunc(func(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
		return dns.RcodeServerFailure, nil
	})
	r := newTestRRL(t, "rrl {\n errors-per-second 2\n slip 0\n}", fail)
	c := udpClient("203.0.113.1")
	for i := range 5 {
		before := c.replies
		if rc := ask(t, r, c, "app.example.com."); !plugin.ClientWrite(rc) {
			t.Fatalf("query %d: rcode %d would make the server write a reply of its own", i, rc)
		}
		sent := c.replies > before
		if sent != (i < 2) {
			t.Errorf("query %d: sent %v", i, sent)
		}
		if sent && c.last.Rcode != dns.RcodeServerFailure {
			t.Errorf("query %d: rcode %s, want SERVFAIL", i, dns.RcodeToString[c.last.Rcode])
		}
	}
}

func TestServeDNSWriteBytes(t *testing.T) {
	// A reply written as bytes is accounted like a message, and sent as
	// those bytes.
	var sent []byte
	raw := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = []dns.RR{test.A(r.Question[0].Name + " 300 IN A 203.0.113.10")}
		sent, _ = m.Pack()
		w.Write(sent)
		return dns.RcodeSuccess, nil
	})
	r := newTestRRL(t, "rrl {\n responses-per-second 1\n slip 1\n}", raw)
	rec := dnstest.NewRecorder(udpClient("203.0.113.1"))
	q := new(dns.Msg)
	q.SetQuestion("app.example.com.", dns.TypeA)
	r.ServeDNS(context.Background(), rec, q)
	if rec.Len != len(sent) {
		t.Fatalf("the first reply was sent as %d bytes, want the %d written", rec.Len, len(sent))
	}
	rec = dnstest.NewRecorder(udpClient("203.0.113.1"))
	r.ServeDNS(context.Background(), rec, q)
	if rec.Msg == nil || !rec.Msg.Truncated || len(rec.Msg.Answer) != 0 {
		t.Errorf("the second reply is not a slip: %v", rec.Msg)
	}
}

func TestServeDNSNoLimitPassesThrough(t *testing.T) {
	// rrl without a rate (BIND's default) limits nothing and does not wrap
	// the writer.
	c := udpClient("203.0.113.1")
	wrapped := false
	next := plugin.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		if _, ok := w.(*ResponseWriter); ok {
			wrapped = true
		}
		return answer.ServeDNS(ctx, w, r)
	})
	r := newTestRRL(t, "rrl", next)
	if full, _ := burst(t, r, c, "app.example.com.", 100); full != 100 {
		t.Errorf("%d answers of 100", full)
	}
	if wrapped {
		t.Error("rrl without a rate wrapped the writer")
	}
}

// TestServeDNSAllocations asserts the per-query cost in allocations, in the
// steady state (the account exists): the accounting allocates nothing; with
// rrl in the chain a query makes one allocation more than without: rrl's
// ResponseWriter on UDP (it cannot be pooled: cache's stale-verify goroutine
// can outlive the query with the writer in hand), CoreDNS's pluginWriter for
// the next plugin on TCP and for an exempt client.
func TestServeDNSAllocations(t *testing.T) {
	r := newTestRRL(t, "rrl {\n responses-per-second 1000\n exempt-clients 192.0.2.0/24\n}", answer)
	q := new(dns.Msg)
	q.SetQuestion("app.example.com.", dns.TypeA)
	res := new(dns.Msg)
	res.SetReply(q)
	res.Answer = []dns.RR{test.A("app.example.com. 300 IN A 203.0.113.10")}
	ctx := context.Background()
	udp, tcp, exempt := udpClient("203.0.113.1"), tcpClient("203.0.113.1"), udpClient("192.0.2.1")
	prefix, _ := r.limitable(udp)

	if n := testing.AllocsPerRun(1000, func() { r.judge(ctx, prefix, res) }); n != 0 {
		t.Errorf("accounting: %v allocations per reply", n)
	}
	// The plugin above calls the next one, rrl or the backend.
	without := testing.AllocsPerRun(1000, func() { plugin.NextOrFailure("cache", answer, ctx, udp, q) })
	for name, c := range map[string]*client{"UDP": udp, "TCP": tcp, "exempt": exempt} {
		if n := testing.AllocsPerRun(1000, func() { plugin.NextOrFailure("cache", r, ctx, c, q) }) - without; n != 1 {
			t.Errorf("%s: rrl adds %v allocations per query, want 1", name, n)
		}
	}
}

// TestServeDNSCounts checks that each limited reply is counted once, under
// the class that decided its fate: a reply its own class would slip but
// all-per-second drops is a drop of class all.
func TestServeDNSCounts(t *testing.T) {
	r := newTestRRL(t, "rrl {\n responses-per-second 1\n all-per-second 2\n slip 1\n}", answer)
	counters := func() [4]float64 {
		return [4]float64{
			value(droppedCount.WithLabelValues("", "response")),
			value(slippedCount.WithLabelValues("", "response")),
			value(droppedCount.WithLabelValues("", "all")),
			value(slippedCount.WithLabelValues("", "all")),
		}
	}
	before := counters()
	full, tc := burst(t, r, udpClient("203.0.113.1"), "app.example.com.", 5)
	after := counters()
	// 1: sent; 2: slipped (response), within all's 2; 3-5: dropped (all).
	want := [4]float64{0, 1, 3, 0}
	for i := range want {
		if after[i]-before[i] != want[i] {
			t.Errorf("counted dropped/slipped response, dropped/slipped all: %v, want %v", [4]float64{after[0] - before[0], after[1] - before[1], after[2] - before[2], after[3] - before[3]}, want)
			break
		}
	}
	if full != 1 || tc != 1 {
		t.Errorf("%d answers and %d slips, want 1 and 1", full, tc)
	}
}

// value returns the value of a counter.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}

func TestServeDNSHoldsTheReply(t *testing.T) {
	// The reply goes out when the plugins below have returned, not while
	// they write it; a second reply sends the first, and a reply written
	// after the handler returned goes out at once.
	c := udpClient("203.0.113.1")
	var late dns.ResponseWriter
	writes := 0
	twice := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		for i := range 2 {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Id = uint16(i)
			w.WriteMsg(m)
			if sent := c.replies; sent != i {
				t.Errorf("after write %d, %d replies sent, want %d", i+1, sent, i)
			}
			writes++
		}
		late = w
		return dns.RcodeSuccess, nil
	})
	r := newTestRRL(t, "rrl {\n responses-per-second 10\n}", twice)
	ask(t, r, c, "app.example.com.")
	if writes != 2 || c.replies != 2 || c.last.Id != 1 {
		t.Fatalf("%d replies sent, the last with ID %d, want 2 and 1", c.replies, c.last.Id)
	}
	m := new(dns.Msg)
	m.SetQuestion("app.example.com.", dns.TypeA)
	m.Response = true
	late.WriteMsg(m)
	if c.replies != 3 {
		t.Errorf("a reply written after the handler returned was not sent")
	}
}
