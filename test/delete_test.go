package test

import (
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

func TestDeletedRecordGoneExternallyAtOnce(t *testing.T) {
	t.Parallel()
	c, etcd := startViews(t, directives{}, a("gone.example.com", "192.168.0.90"))
	runCases(t, c, []viewCase{{"before the deletion", "external", test.Case{
		Qname: "gone.example.com.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("gone.example.com. 900 IN A 203.0.113.10")},
	}}})

	deleteRecords(t, etcd, "gone.example.com")

	runCases(t, c, []viewCase{
		{"external view right after the deletion", "external", test.Case{
			Qname: "gone.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
		{"external view right after the deletion, ownership record", "external", test.Case{
			Qname: "a-gone.example.com.", Qtype: dns.TypeTXT, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
	})
}
