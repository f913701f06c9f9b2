package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// exampleZone is example.com as a zone file for the file plugin.
const exampleZone = `$ORIGIN example.com.
@	3600	IN	SOA	ns.example.com. hostmaster.example.com. 1 7200 1800 86400 300
	3600	IN	NS	ns.example.com.
ns	3600	IN	A	192.168.0.2
app	3600	IN	A	192.168.0.51
	3600	IN	AAAA	fd00::51
mixed	3600	IN	A	192.168.0.61
	3600	IN	A	192.168.0.62
	3600	IN	A	198.51.100.20
www	3600	IN	CNAME	app
_http._tcp	3600	IN	SRV	10 10 80 app
`

// fileCorefile serves exampleZone (ZONE stands for its file) from the file
// plugin in an internal and an external view.
const fileCorefile = `
example.com:{port:internal} {
	file ZONE
}

example.com:{port:external} {
	globaladdr 203.0.113.10 2001:db8::10 {
		ttl 900
	}
	file ZONE
}
`

// TestFileBackendZoneIntact checks the file backend, whose plugin hands out
// its zone's own records, not copies: external queries are rewritten, and
// queries after them get the zone's records as the file has them,
// internally, and the same rewritten answers again, externally.
//
// Each server block loads its own copy of the zone, so the internal answers
// show that the external view leaks nothing into the internal one; that the
// rewrite never changes the records it is handed is asserted by the
// plugin's own tests, as no DNS answer shows the external block's zone
// unrewritten.
func TestFileBackendZoneIntact(t *testing.T) {
	t.Parallel()
	zone := filepath.Join(t.TempDir(), "db.example.com")
	if err := os.WriteFile(zone, []byte(exampleZone), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startCoreDNS(t, strings.ReplaceAll(fileCorefile, "ZONE", zone))

	// The file plugin adds the zone's NS records to every answer.
	ns := []dns.RR{test.NS("example.com. 3600 IN NS ns.example.com.")}
	external := []viewCase{
		{"external A", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")},
			Ns:     ns,
		}},
		{"external AAAA", "external", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA,
			Answer: []dns.RR{test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10")},
			Ns:     ns,
		}},
		{"external A of several addresses", "external", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.A("mixed.example.com. 900 IN A 203.0.113.10"),
				test.A("mixed.example.com. 900 IN A 198.51.100.20"), // one TTL per RRset: the lowest
			},
			Ns: ns,
		}},
		{"external CNAME chain", "external", test.Case{
			Qname: "www.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("www.example.com. 3600 IN CNAME app.example.com."),
				test.A("app.example.com. 900 IN A 203.0.113.10"),
			},
			Ns: ns,
		}},
		{"external SRV with its target's addresses in Additional", "external", test.Case{
			Qname: "_http._tcp.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("_http._tcp.example.com. 3600 IN SRV 10 10 80 app.example.com.")},
			Ns:     ns,
			Extra: []dns.RR{
				test.A("app.example.com. 900 IN A 203.0.113.10"),
				test.AAAA("app.example.com. 900 IN AAAA 2001:db8::10"),
			},
		}},
	}
	internal := []viewCase{
		{"internal A", "internal", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{test.A("app.example.com. 3600 IN A 192.168.0.51")},
			Ns:     ns,
		}},
		{"internal AAAA", "internal", test.Case{
			Qname: "app.example.com.", Qtype: dns.TypeAAAA,
			Answer: []dns.RR{test.AAAA("app.example.com. 3600 IN AAAA fd00::51")},
			Ns:     ns,
		}},
		{"internal A of several addresses", "internal", test.Case{
			Qname: "mixed.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.A("mixed.example.com. 3600 IN A 192.168.0.61"),
				test.A("mixed.example.com. 3600 IN A 192.168.0.62"),
				test.A("mixed.example.com. 3600 IN A 198.51.100.20"),
			},
			Ns: ns,
		}},
		{"internal CNAME chain", "internal", test.Case{
			Qname: "www.example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{
				test.CNAME("www.example.com. 3600 IN CNAME app.example.com."),
				test.A("app.example.com. 3600 IN A 192.168.0.51"),
			},
			Ns: ns,
		}},
		{"internal SRV with its target's addresses in Additional", "internal", test.Case{
			Qname: "_http._tcp.example.com.", Qtype: dns.TypeSRV,
			Answer: []dns.RR{test.SRV("_http._tcp.example.com. 3600 IN SRV 10 10 80 app.example.com.")},
			Ns:     ns,
			Extra: []dns.RR{
				test.A("app.example.com. 3600 IN A 192.168.0.51"),
				test.AAAA("app.example.com. 3600 IN AAAA fd00::51"),
			},
		}},
	}
	t.Run("external queries first", func(t *testing.T) { runCases(t, c, external) })
	t.Run("internal queries after them", func(t *testing.T) { runCases(t, c, internal) })
	t.Run("external queries again", func(t *testing.T) { runCases(t, c, external) })
}
