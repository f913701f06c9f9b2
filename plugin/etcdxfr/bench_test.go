package etcdxfr

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	"github.com/miekg/dns"
)

// answer is a backend that answers every query with the same A record, so
// that the benchmarks measure what etcdxfr adds to a query, not etcd.
type answer struct{}

func (answer) Name() string { return "answer" }

var appA = test.A("app.example.com. 300 IN A 203.0.113.10")

func (answer) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Answer = []dns.RR{appA}
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

func benchmark(b *testing.B, h plugin.Handler) {
	ctx, w := context.Background(), &test.ResponseWriter{}
	r := new(dns.Msg)
	r.SetQuestion("app.example.com.", dns.TypeA)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeDNS(ctx, w, r)
	}
}

// BenchmarkQueryWithout is an A query answered by the backend alone.
func BenchmarkQueryWithout(b *testing.B) { benchmark(b, answer{}) }

// BenchmarkQueryWith is the same query through etcdxfr: the query path's
// cost of making the zone transferable.
func BenchmarkQueryWith(b *testing.B) {
	x := &EtcdXfr{Next: answer{}, Zones: []string{"example.com."}}
	x.apex = apex{ns: []string{"ns1.example.net."}}
	x.zones = map[string]*zone{"example.com.": {name: "example.com.", serial: &serial{}}}
	benchmark(b, x)
}

// BenchmarkEtcdQueryWithout is an A query answered by the etcd plugin
// alone, reading an embedded etcd.
func BenchmarkEtcdQueryWithout(b *testing.B) {
	x, s := newTestXfr(b)
	put(b, s, externaldns.Record{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}})
	benchmark(b, x.Next)
}

// BenchmarkEtcdQueryWith is the same query through etcdxfr.
func BenchmarkEtcdQueryWith(b *testing.B) {
	x, s := newTestXfr(b)
	put(b, s, externaldns.Record{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}})
	benchmark(b, x)
}
