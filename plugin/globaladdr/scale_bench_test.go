//go:build unix

package globaladdr

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/globaladdr/globaladdr/internal/cpuclock"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"

	"github.com/miekg/dns"
)

// scaleShapes are the large answers of an etcd subtree (every record owned
// by the name asked, as the etcd plugin answers an ancestor) that used to
// cost time quadratic in their size.
var scaleShapes = []struct {
	name     string
	corefile string
	record   func(i int) dns.RR // the i-th record of the answer
}{
	// Every record distinct after map's prefix translation.
	{"distinct_after_map", mapPolicy, func(i int) dns.RR { return scaleA(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})) }},
	// Public records, and one internal record among them.
	{"public_one_internal", benchPolicy, func(i int) dns.RR {
		if i == 0 {
			return scaleA(netip.MustParseAddr("192.168.0.51"))
		}
		return scaleA(netip.AddrFrom4([4]byte{198, 51, byte(i >> 8), byte(i)}))
	}},
	// Internal records that all become the one global address.
	{"all_duplicates", benchPolicy, func(i int) dns.RR { return scaleA(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})) }},
}

func scaleA(a netip.Addr) dns.RR {
	return &dns.A{Hdr: dns.RR_Header{Name: "example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: a.AsSlice()}
}

// BenchmarkRewriteScale rewrites answers of n records in each of
// scaleShapes, for n from 10 to 10,000; ns/record (CPU time) stays flat when
// the rewrite is linear.
func BenchmarkRewriteScale(b *testing.B) {
	for _, shape := range scaleShapes {
		for _, n := range []int{10, 100, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/n=%d", shape.name, n), func(b *testing.B) {
				m := new(dns.Msg)
				m.SetQuestion("example.com.", dns.TypeA)
				for i := range n {
					m.Answer = append(m.Answer, shape.record(i))
				}
				g := benchCase{corefile: shape.corefile}.plugin(b, nil)
				addrs := g.addrs.Load()
				before := cpuclock.Used(b)
				measure(b, func() {
					if _, err := g.policy.Rewrite(m, addrs, &outside.Tally{}); err != nil {
						b.Fatal(err)
					}
				})
				b.ReportMetric(float64((cpuclock.Used(b)-before).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/record")
			})
		}
	}
}
