package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestCacheKeepsViewsApart proves that with cache in both server blocks no
// answer crosses views: each block caches its own view. After the record is
// deleted from etcd, both views still answer from their caches, each with
// its own addresses.
func TestCacheKeepsViewsApart(t *testing.T) {
	t.Parallel()
	c, etcd := startViews(t, directives{all: "cache 60"},
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
	)
	// TTLs are not compared (303): cached answers count down.
	internalA := viewCase{"internal A", "internal", test.Case{
		Qname: "app.example.com.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("app.example.com. 303 IN A 192.168.0.51")},
	}}
	externalA := viewCase{"external A", "external", test.Case{
		Qname: "app.example.com.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("app.example.com. 303 IN A 203.0.113.10")},
	}}
	internalAAAA := viewCase{"internal AAAA", "internal", test.Case{
		Qname: "app.example.com.", Qtype: dns.TypeAAAA,
		Answer: []dns.RR{test.AAAA("app.example.com. 303 IN AAAA fd00::51")},
	}}
	externalAAAA := viewCase{"external AAAA", "external", test.Case{
		Qname: "app.example.com.", Qtype: dns.TypeAAAA,
		Answer: []dns.RR{test.AAAA("app.example.com. 303 IN AAAA 2001:db8::10")},
	}}

	t.Run("each view fills its cache", func(t *testing.T) {
		// A: internal first; AAAA: external first.
		runCases(t, c, []viewCase{internalA, externalA, externalAAAA, internalAAAA})
	})
	t.Run("cached answers stay in their view", func(t *testing.T) {
		runCases(t, c, []viewCase{externalA, internalA, internalAAAA, externalAAAA})
	})
	deleteRecords(t, etcd, "app.example.com")
	t.Run("answers come from the caches once etcd lost the record", func(t *testing.T) {
		runCases(t, c, []viewCase{internalA, externalA, internalAAAA, externalAAAA})
	})
}
