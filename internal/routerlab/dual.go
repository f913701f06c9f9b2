package routerlab

import (
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/globaladdr/globaladdr/internal/netlab"
)

// The second uplink's addresses, in a Dual lab.
var (
	// Router2LAN is the second router's address on its LAN link.
	Router2LAN = netip.MustParseAddr("10.78.0.1")
	// Host2 is the test's address on the second router's LAN link: what
	// leaves from it goes out through the second router (policy routing).
	Host2 = netip.MustParseAddr("10.78.0.2")
	// Upstream2 is the WAN namespace's address on the second uplink.
	Upstream2 = netip.MustParseAddr("22.33.44.1")
	// SecondWAN is the second router's WAN address.
	SecondWAN = netip.MustParseAddr("22.33.44.2")
	// Echo is an address of the WAN namespace's own (on its loopback),
	// reached over either uplink: the servers that see the uplinks from
	// outside listen there.
	Echo = netip.MustParseAddr("33.44.55.1")
)

// The second router's interfaces.
const (
	LAN2Dev = "r2lan0"
	WAN2Dev = "r2wan0"
)

// Dual is a home network with two uplinks, for failover: the Lab's router
// (miniupnpd) and a second router, each a namespace that masquerades with
// nftables into the same WAN namespace over a link of its own. The test's
// namespace holds an address on each router's LAN link, and its policy
// routing sends what leaves from Host through the first router (its
// default route) and what leaves from Host2 through the second: a
// multi-homed node, as a pod on a router with two WANs is.
type Dual struct {
	*Lab
	// Router2 is the second router's namespace.
	Router2 *netlab.NS
}

// NewDual builds the two-uplink lab; call it in the namespace netlab.Enter
// made. It needs what New needs.
func NewDual(t testing.TB) *Dual {
	l := New(t)
	d := &Dual{Lab: l, Router2: l.Namespace("router2")}
	l.Link(l.Self(), "lan1", Host2.String()+"/24", d.Router2, LAN2Dev, Router2LAN.String()+"/24")
	l.Link(d.Router2, WAN2Dev, SecondWAN.String()+"/24", l.WAN, "wan1", Upstream2.String()+"/24")
	l.Self().IP("rule", "add", "from", Host2.String(), "lookup", "102")
	l.Self().IP("route", "add", "default", "via", Router2LAN.String(), "table", "102")
	d.Router2.IP("route", "add", "default", "via", Upstream2.String(), "dev", WAN2Dev, "onlink")
	d.Router2.Run("sysctl", "-qw", "net.ipv4.ip_forward=1")
	rules := filepath.Join(t.TempDir(), "router2.nft")
	write(t, rules, `table inet nat {
	chain postrouting {
		type nat hook postrouting priority 100; policy accept;
		oifname "`+WAN2Dev+`" masquerade
	}
}
`)
	d.Router2.Run("nft", "-f", rules)
	l.WAN.IP("addr", "add", Echo.String()+"/32", "dev", "lo")
	return d
}

// router returns uplink n's router (1 or 2) and the WAN namespace's end of
// its link.
func (d *Dual) router(n int) (*netlab.NS, string) {
	if n == 2 {
		return d.Router2, "wan1"
	}
	return d.Router, "wan0"
}

// CutLink takes uplink n's link down at the WAN's end, as a dead fibre
// or modem: the router keeps its address and loses its carrier.
func (d *Dual) CutLink(n int) {
	_, dev := d.router(n)
	d.WAN.IP("link", "set", dev, "down")
}

// RestoreLink brings uplink n's link up again.
func (d *Dual) RestoreLink(n int) {
	_, dev := d.router(n)
	d.WAN.IP("link", "set", dev, "up")
}

// Drop makes uplink n's router drop everything it would forward, as an
// upstream that is dead behind a router that goes on reporting its WAN
// address (miniupnpd, on the first, answers as before).
func (d *Dual) Drop(n int) {
	r, _ := d.router(n)
	rules := filepath.Join(d.t.TempDir(), "drop"+strconv.Itoa(n)+".nft")
	write(d.t, rules, `table inet cut {
	chain forward {
		type filter hook forward priority -10; policy drop;
	}
}
`)
	r.Run("nft", "-f", rules)
}

// Undrop takes Drop's rule away.
func (d *Dual) Undrop(n int) {
	r, _ := d.router(n)
	r.Run("nft", "delete", "table", "inet", "cut")
}
