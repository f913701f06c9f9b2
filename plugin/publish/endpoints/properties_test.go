package endpoints

import (
	"testing"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// TestAddProperties gives a zone's endpoints a property for all and one for
// the tunnelled CNAMEs: a CNAME elsewhere and an address get the first
// alone.
func TestAddProperties(t *testing.T) {
	eps := []wire.Endpoint{
		{DNSName: "app.example.com", RecordType: "CNAME", Targets: []string{"Relay.example.net"}},
		{DNSName: "alias.example.com", RecordType: "CNAME", Targets: []string{"lb.example.net"}},
		{DNSName: "www.example.com", RecordType: "A", Targets: []string{"198.51.100.7"}},
	}
	AddProperties(eps, []Property{{Name: "cloudflare/record-comment", Value: "globaladdr"}, {Name: "cloudflare/proxied", Value: "true", Tunnelled: true}}, "relay.example.net.")
	want := []int{2, 1, 1}
	for i, e := range eps {
		if len(e.ProviderSpecific) != want[i] {
			t.Errorf("%s: %v, want %d properties", e.DNSName, e.ProviderSpecific, want[i])
		}
	}
	if v, _ := eps[0].Property("cloudflare/proxied"); v != "true" {
		t.Errorf("the tunnelled CNAME: %v", eps[0].ProviderSpecific)
	}
}
