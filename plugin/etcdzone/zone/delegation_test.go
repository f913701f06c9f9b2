package zone

import (
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// TestDelegation asks for names at and below a delegated subdomain: a
// referral, not authoritative, with the glue of the name server inside it.
func TestDelegation(t *testing.T) {
	idx := newTestIndex(t, "app.example.com. 300 IN A 192.0.2.1")
	add(idx, "delegate lab.example.com.", "lab.example.com.", testApex.NSSet("lab.example.com.", []string{"ns1.lab.example.com.", "ns2.example.net."}), nil)
	add(idx, "glue ns1.lab.example.com.", "ns1.lab.example.com.", testApex.AddressRecords("ns1.lab.example.com.", []netip.Addr{netip.MustParseAddr("192.0.2.53")}), nil)
	v := build(idx, nil, "lab.example.com.")
	referral := "NOERROR\n;\n;\nlab.example.com.\t3600\tIN\tNS\tns1.lab.example.com.\nlab.example.com.\t3600\tIN\tNS\tns2.example.net.\n;\nns1.lab.example.com.\t3600\tIN\tA\t192.0.2.53"
	check(t, v, map[string]string{
		"lab.example.com. A":      referral,
		"host.lab.example.com. A": referral,
		"app.example.com. A":      "NOERROR\n;\napp.example.com.\t300\tIN\tA\t192.0.2.1\n;\n;",
	})
	if m := ask(v, "host.lab.example.com.", dns.TypeA); m.Authoritative {
		t.Error("a referral is authoritative")
	}
}
