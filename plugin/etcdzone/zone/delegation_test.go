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

// TestDelegationGlueInView builds a delegation whose glue (the Corefile's,
// a source of the index like an etcd key) has an internal address, as a
// view shows it: the referral's Additional section and the transfer hold
// the global address, never the internal one.
func TestDelegationGlueInView(t *testing.T) {
	idx := newTestIndex(t)
	add(idx, "delegate lab.example.com.", "lab.example.com.", testApex.NSSet("lab.example.com.", []string{"ns1.lab.example.com."}), nil)
	add(idx, "glue ns1.lab.example.com.", "ns1.lab.example.com.", testApex.AddressRecords("ns1.lab.example.com.", []netip.Addr{netip.MustParseAddr("10.0.0.53")}), nil)
	v := build(idx, externalView("203.0.113.10"), "lab.example.com.")
	check(t, v, map[string]string{
		"host.lab.example.com. A": "NOERROR\n;\n;\nlab.example.com.\t3600\tIN\tNS\tns1.lab.example.com.\n;\nns1.lab.example.com.\t3600\tIN\tA\t203.0.113.10",
	})
	for _, rr := range v.Records() {
		if a, ok := rr.(*dns.A); ok && a.A.IsPrivate() {
			t.Errorf("the transfer holds %s", rr)
		}
	}
}
