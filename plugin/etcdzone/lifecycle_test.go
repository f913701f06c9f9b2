package etcdzone

import (
	"maps"
	"net/netip"
	"slices"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"
)

// TestNewBlock makes the zones of a block whose Corefile names name
// servers in ns and in a delegation, one with glue: what the zones share
// says which name servers there are, which of them have glue, and the
// zones by name.
func TestNewBlock(t *testing.T) {
	x := newTestPlugin(t, startTestEtcd(t), "example.com.", "lab.example.com.")
	x.etcd.Zones = []string{"example.com.", "lab.example.com."}
	x.corefile.Apex.NS = []string{"ns1.example.com.", "ns2.example.net."}
	x.corefile.Delegations = []config.Delegation{{Name: "dev.example.com.", NS: []string{"ns1.dev.example.com.", "ns2.example.net."}}}
	x.corefile.Glue = []config.Glue{{Name: "ns1.dev.example.com.", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.53")}}}
	setZones(t, x)
	b := x.block
	want := map[string]bool{"ns1.example.com.": false, "ns2.example.net.": false, "ns1.dev.example.com.": true}
	if !maps.Equal(b.NameServers, want) {
		t.Errorf("name servers %v, want %v", b.NameServers, want)
	}
	if !slices.Equal(b.Zones, []string{"example.com.", "lab.example.com."}) {
		t.Errorf("zones %v", b.Zones)
	}
	if in, _, _ := b.Names.Deepest("ns1.lab.example.com."); in != "lab.example.com." {
		t.Errorf("ns1.lab.example.com. lies in %q of the block's zones, want lab.example.com.", in)
	}
	if b.View != nil || b.Tree != x.tree.tree || b.Published == nil {
		t.Errorf("the block's view %v, tree %v, published %v: want none, the block's tree, a channel", b.View, b.Tree, b.Published)
	}
}
