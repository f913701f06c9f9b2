package rrl

import (
	"hash/maphash"
	"net/netip"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

func TestClassify(t *testing.T) {
	soa := test.SOA("example.com. 300 IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 30")
	tests := []struct {
		name  string
		reply func(m *dns.Msg)
		class class
		key   string
		qtype uint16
	}{
		{"answer", func(m *dns.Msg) { m.Answer = []dns.RR{test.A("app.example.com. 300 IN A 203.0.113.10")} }, classResponse, "app.example.com.", dns.TypeA},
		{"nodata", func(m *dns.Msg) { m.Authoritative, m.Ns = true, []dns.RR{soa} }, classNodata, "app.example.com.", 0},
		{"nodata without SOA", func(m *dns.Msg) {}, classNodata, "app.example.com.", 0},
		{"nxdomain", func(m *dns.Msg) { m.Rcode, m.Ns = dns.RcodeNameError, []dns.RR{soa} }, classNxdomain, "example.com.", 0},
		{"nxdomain without SOA", func(m *dns.Msg) { m.Rcode = dns.RcodeNameError }, classNxdomain, "app.example.com.", 0},
		{"referral", func(m *dns.Msg) {
			m.Ns = []dns.RR{test.NS("sub.example.com. 300 IN NS ns.sub.example.com.")}
		}, classReferral, "sub.example.com.", 0},
		{"authoritative NS in authority is no referral", func(m *dns.Msg) {
			m.Authoritative, m.Ns = true, []dns.RR{test.NS("example.com. 300 IN NS ns.example.com.")}
		}, classNodata, "app.example.com.", 0},
		{"servfail", func(m *dns.Msg) { m.Rcode = dns.RcodeServerFailure }, classError, "", 0},
		{"refused", func(m *dns.Msg) { m.Rcode = dns.RcodeRefused }, classError, "", 0},
		{"no question", func(m *dns.Msg) { m.Question = nil }, classError, "", 0},
	}
	for _, tc := range tests {
		r := new(dns.Msg)
		r.SetQuestion("app.example.com.", dns.TypeA)
		m := new(dns.Msg)
		m.SetReply(r)
		tc.reply(m)
		c, key, qtype := classify(m)
		if c != tc.class || key != tc.key || qtype != tc.qtype {
			t.Errorf("%s: %v %q %d, want %v %q %d", tc.name, c, key, qtype, tc.class, tc.key, tc.qtype)
		}
	}
}

func TestAccountKey(t *testing.T) {
	seed := maphash.MakeSeed()
	v4, v4b := netip.MustParseAddr("192.0.2.0"), netip.MustParseAddr("198.51.100.0")
	v6 := netip.MustParseAddr("::ffff:192.0.2.0") // another family, though it maps 192.0.2.0
	k := accountKey(seed, v4, classResponse, "App.Example.COM.", dns.TypeA)
	if k != accountKey(seed, v4, classResponse, "app.example.com.", dns.TypeA) {
		t.Error("the key depends on the name's case")
	}
	for name, other := range map[string]uint64{
		"prefix": accountKey(seed, v4b, classResponse, "app.example.com.", dns.TypeA),
		"class":  accountKey(seed, v4, classNodata, "app.example.com.", dns.TypeA),
		"name":   accountKey(seed, v4, classResponse, "www.example.com.", dns.TypeA),
		"type":   accountKey(seed, v4, classResponse, "app.example.com.", dns.TypeAAAA),
		"family": accountKey(seed, v6, classResponse, "app.example.com.", dns.TypeA),
	} {
		if other == k {
			t.Errorf("another %s, the same key", name)
		}
	}
	// A name longer than the key's buffer is hashed in blocks: all of it
	// counts, its case does not.
	long := strings.Repeat("abcdefghij.", 30) // 330 characters: four blocks
	lk := accountKey(seed, v4, classResponse, long+"a.", dns.TypeA)
	if lk != accountKey(seed, v4, classResponse, strings.ToUpper(long)+"A.", dns.TypeA) {
		t.Error("the key of a long name depends on its case")
	}
	for _, other := range []string{long + "b.", long, "x" + long[1:] + "a."} {
		if accountKey(seed, v4, classResponse, other, dns.TypeA) == lk {
			t.Errorf("%q and the name that differs from it in one place have the same key", other)
		}
	}
	if n := testing.AllocsPerRun(1000, func() { accountKey(seed, v4, classResponse, long, dns.TypeA) }); n != 0 {
		t.Errorf("%v allocations per key of a long name", n)
	}
	if n := testing.AllocsPerRun(1000, func() { accountKey(seed, v4, classResponse, "app.example.com.", dns.TypeA) }); n != 0 {
		t.Errorf("%v allocations per key", n)
	}
}
