//go:build unix

package globaladdr

import (
	"context"
	"fmt"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/any"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/cpuclock"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/marks"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"

	"github.com/miekg/dns"
)

// benchCase is one realistic reply from a backend, as the external view
// receives it.
type benchCase struct {
	name     string
	corefile string
	qtype    uint16
	answer   []dns.RR
	extra    []dns.RR
}

// benchPolicy is a typical external view: an IPv4 and an IPv6 global
// address, a TTL, the default internal ranges.
const benchPolicy = "globaladdr 203.0.113.10 2001:db8::10 {\n ttl 900\n}"

// mapPolicy translates 10.0/16 into a public prefix, keeping the host bits.
const mapPolicy = "globaladdr 203.0.113.10 {\n ttl 900\n map 10.0.0.0/16 198.51.0.0/16\n}"

// opt is the EDNS0 record a resolver's query usually carries, echoed in the
// reply's Additional section.
func opt() dns.RR {
	o := new(dns.OPT)
	o.Hdr.Name, o.Hdr.Rrtype = ".", dns.TypeOPT
	o.SetUDPSize(1232)
	return o
}

// internalA returns n A records of distinct names below example.com with
// distinct internal addresses: what the etcd plugin answers for a name with
// a subtree (SkyDNS semantics).
func internalA(n int) []dns.RR {
	rrs := make([]dns.RR, n)
	for i := range rrs {
		rrs[i] = test.A(fmt.Sprintf("h%d.app.example.com. 30 IN A 10.0.%d.%d", i, i/250, i%250+1))
	}
	return rrs
}

// benchCases lists the replies the benchmarks rewrite.
func benchCases() []benchCase {
	return []benchCase{
		{
			name: "passthrough", corefile: benchPolicy, qtype: dns.TypeSRV,
			answer: []dns.RR{test.SRV("example.com. 30 IN SRV 10 100 443 app.example.com.")},
			extra:  []dns.RR{test.A("app.example.com. 30 IN A 198.51.100.1"), test.AAAA("app.example.com. 30 IN AAAA 2001:db8::1"), opt()},
		},
		{
			name: "one_internal_A", corefile: benchPolicy, qtype: dns.TypeA,
			answer: []dns.RR{test.A("app.example.com. 30 IN A 192.168.0.51")},
			extra:  []dns.RR{opt()},
		},
		{
			name: "mixed_A", corefile: benchPolicy, qtype: dns.TypeA,
			answer: []dns.RR{
				test.A("app.example.com. 30 IN A 192.168.0.51"), test.A("app.example.com. 30 IN A 198.51.100.1"),
				test.A("app.example.com. 30 IN A 10.1.2.3"), test.A("app.example.com. 30 IN A 198.51.100.2"),
			},
			extra: []dns.RR{opt()},
		},
		{
			name: "one_internal_AAAA", corefile: benchPolicy, qtype: dns.TypeAAAA,
			answer: []dns.RR{test.AAAA("app.example.com. 30 IN AAAA fd00::51")},
			extra:  []dns.RR{opt()},
		},
		{
			name: "SRV_with_additional", corefile: benchPolicy, qtype: dns.TypeSRV,
			answer: []dns.RR{
				test.SRV("example.com. 30 IN SRV 10 33 443 a.example.com."),
				test.SRV("example.com. 30 IN SRV 10 33 443 b.example.com."),
				test.SRV("example.com. 30 IN SRV 10 33 443 c.example.com."),
			},
			extra: []dns.RR{
				test.A("a.example.com. 30 IN A 192.168.0.51"), test.A("b.example.com. 30 IN A 192.168.0.52"),
				test.A("c.example.com. 30 IN A 192.168.0.53"), opt(),
			},
		},
		{
			name: "20_internal_A", corefile: benchPolicy, qtype: dns.TypeA,
			answer: internalA(20),
			extra:  []dns.RR{opt()},
		},
		{
			name: "map_prefix", corefile: mapPolicy, qtype: dns.TypeA,
			answer: internalA(4),
			extra:  []dns.RR{opt()},
		},
	}
}

// reply returns the backend's reply to a query for bc.
func (bc benchCase) reply() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion("app.example.com.", bc.qtype)
	m.Response, m.Authoritative = true, true
	m.Answer, m.Extra = bc.answer, bc.extra
	return m
}

// plugin returns the globaladdr of bc's Corefile above next.
func (bc benchCase) plugin(tb testing.TB, next plugin.Handler) *GlobalAddr {
	tb.Helper()
	g, err := parse(caddy.NewTestController("dns", bc.corefile))
	if err != nil {
		tb.Fatal(err)
	}
	g.Next = next
	return g
}

// fixedReply is a backend that answers every query with rep, as the file
// plugin hands out its zone's own records.
func fixedReply(rep *dns.Msg) plugin.Handler {
	return plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, _ *dns.Msg) (int, error) {
		w.WriteMsg(rep)
		return dns.RcodeSuccess, nil
	})
}

// TestRewriteAllocsPerRecord holds the rewrite to a fixed cost: two
// allocations per rewritten reply (the message and the rewritten section),
// and per rewritten record one (the new record), two with prefix
// translation (the record and its address).
func TestRewriteAllocsPerRecord(t *testing.T) {
	tests := []struct {
		corefile  string
		perRecord int
	}{
		{benchPolicy, 1},
		{mapPolicy, 2},
	}
	for _, tc := range tests {
		for _, n := range []int{1, 4, 20} {
			bc := benchCase{corefile: tc.corefile, qtype: dns.TypeA, answer: internalA(n), extra: []dns.RR{opt()}}
			g := bc.plugin(t, nil)
			m, addrs := bc.reply(), g.addrs.Load()
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := g.policy.Rewrite(m, addrs, &outside.Tally{}); err != nil {
					t.Fatal(err)
				}
			})
			if want := 2 + tc.perRecord*n; allocs != float64(want) {
				t.Errorf("%q: rewriting %d internal A records allocates %v times, want %d", tc.corefile, n, allocs, want)
			}
		}
	}
}

// BenchmarkRewrite measures outside.Policy.Rewrite alone. rewritten/op is the number
// of A and AAAA records it replaced per reply.
func BenchmarkRewrite(b *testing.B) {
	for _, bc := range benchCases() {
		b.Run(bc.name, func(b *testing.B) {
			g := bc.plugin(b, nil)
			m, addrs := bc.reply(), g.addrs.Load()
			var t outside.Tally
			measure(b, func() {
				t = outside.Tally{}
				if _, err := g.policy.Rewrite(m, addrs, &t); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(t.RewrittenA+t.RewrittenAAAA), "rewritten/op")
		})
	}
}

// BenchmarkServeDNS measures a query through the whole handler, with a
// recorder as the client: "without" is the backend alone, "any" the backend
// below CoreDNS's any plugin, which passes the query on untouched (what any
// plugin in the chain costs), "with" the backend below globaladdr,
// "marks" the same when globaladdr judges the backend's records by the
// marks of the etcd plugin's tree (10,000 keys), and "served" the backend
// below globaladdr when the backend serves the zone as the view shows it
// (etcdzone: Serve), which passes its answers through. with minus any is
// the cost of the wrapper and the rewrite; marks minus with that of the
// marks; served minus any that of the pass-through.
func BenchmarkServeDNS(b *testing.B) {
	for _, bc := range benchCases() {
		rep := bc.reply()
		backend := fixedReply(rep)
		req := new(dns.Msg)
		req.SetQuestion(rep.Question[0].Name, bc.qtype)
		served := bc.plugin(b, backend)
		served.Serve([]string{"example.com."})
		marked := bc.plugin(b, backend)
		marked.etcdMarks.Store(benchMarks())
		for _, v := range []struct {
			name string
			h    plugin.Handler
		}{
			{"without", backend},
			{"any", any.Any{Next: backend}},
			{"with", bc.plugin(b, backend)},
			{"marks", marked},
			{"served", served},
		} {
			b.Run(bc.name+"/"+v.name, func(b *testing.B) {
				ctx := context.Background()
				measure(b, func() {
					if _, err := v.h.ServeDNS(ctx, dnstest.NewRecorder(&test.ResponseWriter{}), req); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// benchMarks returns the marks of a tree of 10,000 keys below example.com,
// the names of benchCases among them, none marked "false".
func benchMarks() *etcdMarks {
	values := map[string][]byte{}
	for i := range 10000 {
		values[fmt.Sprintf("/skydns/com/example/app/h%d/x1", i)] = []byte(`{"host":"10.0.0.1"}`)
	}
	for _, name := range []string{"app", "a", "b", "c"} {
		values["/skydns/com/example/"+name+"/x2"] = []byte(`{"host":"192.168.0.51","globaladdr-external":"true"}`)
	}
	m := marks.New("/skydns", []string{"example.com."})
	m.Set(values)
	return &etcdMarks{marks: m, etcd: &etcd.Etcd{Zones: []string{"example.com."}}}
}

// measure runs op b.N times and reports, beside the wall time, the CPU time
// the process spent per op (cpu-ns/op, garbage collection included): on a
// shared machine, time spent waiting for a CPU inflates ns/op but not
// cpu-ns/op, so compare changes by cpu-ns/op and allocs/op.
func measure(b *testing.B, op func()) {
	b.ReportAllocs()
	before := cpuclock.Used(b)
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64((cpuclock.Used(b)-before).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
