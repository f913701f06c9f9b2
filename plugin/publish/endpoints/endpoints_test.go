package endpoints

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
)

// rrs parses records in zone-file format, one a line.
func rrs(t *testing.T, lines ...string) []dns.RR {
	t.Helper()
	var out []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, rr)
	}
	return out
}

// lines returns eps as "NAME TYPE TTL TARGET|TARGET..." lines, in order.
func lines(eps []wire.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, fmt.Sprintf("%s %s %d %s", e.DNSName, e.RecordType, e.RecordTTL, strings.Join(e.Targets, "|")))
	}
	return out
}

func TestFromZone(t *testing.T) {
	zone := rrs(t,
		"example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 7 3600 600 86400 60",
		"example.com. 3600 IN NS ns1.example.net.",
		"example.com. 3600 IN NS ns2.example.net.",
		"example.com. 300 IN A 203.0.113.10",
		"example.com. 3600 IN DNSKEY 257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==",
		"example.com. 3600 IN RRSIG SOA 13 2 3600 20300101000000 20250101000000 12345 example.com. AAAA",
		"example.com. 3600 IN RRSIG A 13 2 300 20300101000000 20250101000000 12345 example.com. AAAA",
		"example.com. 60 IN NSEC3PARAM 1 0 0 -",
		"App.Example.COM. 900 IN A 203.0.113.10",
		"app.example.com. 900 IN AAAA 2001:db8::10",
		"www.example.com. 300 IN A 198.51.100.9",
		"www.example.com. 60 IN A 198.51.100.7",
		"www.example.com. 120 IN A 198.51.100.8",
		"www.example.com. 120 IN A 198.51.100.7",
		"*.lab.example.com. 300 IN CNAME app.example.com.",
		"sub.example.com. 86400 IN NS ns2.example.net.",
		"sub.example.com. 86400 IN NS ns1.example.net.",
		"sub.example.com. 86400 IN DS 12345 13 2 6A2B0C1E5D7F3A4B9C8D7E6F5A4B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B",
		"example.com. 3600 IN CAA 0 issue \"letsencrypt.org\"",
		"example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 7 3600 600 86400 60",
	)
	eps, skipped := FromZone("Example.com", zone)
	want := []string{
		"*.lab.example.com CNAME 300 app.example.com",
		"app.example.com A 900 203.0.113.10",
		"app.example.com AAAA 900 2001:db8::10",
		"example.com A 300 203.0.113.10",
		"sub.example.com NS 86400 ns1.example.net|ns2.example.net",
		"www.example.com A 60 198.51.100.7|198.51.100.8|198.51.100.9",
	}
	if got := lines(eps); !slices.Equal(got, want) {
		t.Errorf("endpoints:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantSkipped := map[uint16]int{dns.TypeDNSKEY: 1, dns.TypeRRSIG: 2, dns.TypeNSEC3PARAM: 1, dns.TypeDS: 1, dns.TypeCAA: 1}
	if !maps.Equal(skipped, wantSkipped) {
		t.Errorf("skipped %v, want %v", skipped, wantSkipped)
	}
}

func TestFromZoneEmpty(t *testing.T) {
	eps, skipped := FromZone("example.com.", rrs(t,
		"example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 7 3600 600 86400 60",
		"example.com. 3600 IN NS ns1.example.net.",
	))
	if len(eps) != 0 || len(skipped) != 0 {
		t.Errorf("a zone of its SOA and NS alone: %v, skipped %v", eps, skipped)
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		rr, want string
	}{
		{"a.example.com. 60 IN A 192.0.2.1", "192.0.2.1"},
		{"a.example.com. 60 IN AAAA 2001:DB8:0:0::1", "2001:db8::1"},
		{"a.example.com. 60 IN CNAME target.example.net.", "target.example.net"},
		{"a.example.com. 60 IN CNAME .", "."},
		{"a.example.com. 60 IN NS ns1.example.net.", "ns1.example.net"},
		{"1.2.0.192.in-addr.arpa. 60 IN PTR host.example.com.", "host.example.com"},
		{"a.example.com. 60 IN MX 10 mx1.example.net.", "10 mx1.example.net"},
		{"a.example.com. 60 IN MX 0 .", "0 ."},
		{"_sip._tcp.example.com. 60 IN SRV 10 5 5060 sip.example.net.", "10 5 5060 sip.example.net."},
		{"_sip._tcp.example.com. 60 IN SRV 0 0 0 .", "0 0 0 ."},
		{`a.example.com. 60 IN TXT word`, `"word"`},
		{`a.example.com. 60 IN TXT "v=spf1 -all"`, `"v=spf1 -all"`},
		{`a.example.com. 60 IN TXT "say \"hi\""`, `"say \"hi\""`},
		{`a.example.com. 60 IN TXT "part one" "part two"`, `"part one" "part two"`},
		{`a.example.com. 60 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`, `100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`},
	} {
		rr, err := dns.NewRR(tc.rr)
		if err != nil {
			t.Fatalf("%q: %v", tc.rr, err)
		}
		if got := Target(rr); got != tc.want {
			t.Errorf("Target(%q) = %q, want %q", tc.rr, got, tc.want)
		}
	}
}
