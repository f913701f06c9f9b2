package rrl

import (
	"context"
	"fmt"
	"hash/maphash"
	"net/netip"
	"testing"

	"github.com/coredns/coredns/plugin"

	"github.com/miekg/dns"
)

// BenchmarkServeDNS measures a UDP query passed down the chain to a backend
// with rrl in between, nothing limited (rates far above the benchmark's),
// and without: rrl's cost per query, over accounts enough to miss the CPU's
// caches as a busy server's do.
func BenchmarkServeDNS(b *testing.B) {
	r := newTestRRL(b, "rrl {\n responses-per-second 1000\n max-table-size 100000\n}", answer)
	c := udpClient("203.0.113.1")
	queries := make([]*dns.Msg, 50000) // a few dozen queries per name and second at most
	for i := range queries {
		queries[i] = new(dns.Msg)
		queries[i].SetQuestion(fmt.Sprintf("app-%05d.example.com.", i), dns.TypeA)
	}
	ctx := context.Background()
	b.Run("without", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			plugin.NextOrFailure("rrl", answer, ctx, c, queries[i%len(queries)])
		}
	})
	b.Run("with", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			plugin.NextOrFailure("cache", r, ctx, c, queries[i%len(queries)])
		}
	})
}

// BenchmarkAccountKey measures the hash of an account's key.
func BenchmarkAccountKey(b *testing.B) {
	seed := maphash.MakeSeed()
	prefix := netip.MustParseAddr("203.0.113.0")
	for b.Loop() {
		accountKey(seed, prefix, classResponse, "app-123.example.com.", dns.TypeA)
	}
}
