package uplink

import (
	"net/netip"
	"slices"
)

// Offer is what one source offers the union: its last good addresses, and
// the uplink they reach (nil for a from line that names none: always up,
// at DefaultPriority).
type Offer struct {
	Uplink *Uplink
	Addrs  []netip.Addr
}

// Chooser chooses the addresses a block's external view serves, of what its
// sources offer, and says when a family has only down uplinks left.
type Chooser struct {
	servers []string // the server labels of the metrics
	// allDown tells, per family (IPv4, IPv6), that every offer of it was
	// of a down uplink at the last choice.
	allDown [2]bool
}

// families names the families as the metrics' family label does.
var families = [2]string{"ipv4", "ipv6"}

// Choose returns the addresses to serve of offers, in the order offered,
// each once. Per family: the addresses of the offers whose uplink is up and
// whose priority is the lowest among those up that offer the family. When
// every offer of a family is of a down uplink, the family keeps what last
// (the addresses served before) holds of them, or all of them when it holds
// none (fail static): a probe that fails never empties the answers.
func (ch *Chooser) Choose(offers []Offer, last []netip.Addr) []netip.Addr {
	var best [2]int // per family; 0 while no offer of it is up
	var offered [2]bool
	for _, o := range offers {
		for fam := range 2 {
			if !slices.ContainsFunc(o.Addrs, func(a netip.Addr) bool { return family(a) == fam }) {
				continue
			}
			offered[fam] = true
			if o.Uplink.Up() && (best[fam] == 0 || o.Uplink.rank() < best[fam]) {
				best[fam] = o.Uplink.rank()
			}
		}
	}
	var kept [2]bool // the family keeps last's addresses
	for fam := range 2 {
		down := offered[fam] && best[fam] == 0
		kept[fam] = down && slices.ContainsFunc(offers, func(o Offer) bool {
			return slices.ContainsFunc(o.Addrs, func(a netip.Addr) bool { return family(a) == fam && slices.Contains(last, a) })
		})
		ch.tell(fam, down)
	}
	var out []netip.Addr
	for _, o := range offers {
		for _, a := range o.Addrs {
			fam := family(a)
			var serve bool
			switch {
			case best[fam] != 0:
				serve = o.Uplink.Up() && o.Uplink.rank() == best[fam]
			case kept[fam]:
				serve = slices.Contains(last, a)
			default:
				serve = true
			}
			if serve && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// tell logs and sets the metric of family fam's having only down uplinks
// (down), when that changes.
func (ch *Chooser) tell(fam int, down bool) {
	if down == ch.allDown[fam] {
		return
	}
	ch.allDown[fam] = down
	v := 0.0
	if down {
		v = 1
		log.Warningf("every uplink with %s addresses is down: the external view keeps serving their last good ones (fail static), though they may reach nothing", families[fam])
	} else {
		log.Infof("an uplink with %s addresses is up again: the external view serves it", families[fam])
	}
	for _, server := range ch.servers {
		lastGood.WithLabelValues(server, families[fam]).Set(v)
	}
}

// Start sets the all-down metric of both families to 0, for servers.
func (ch *Chooser) Start(servers []string) {
	ch.servers = servers
	for _, server := range servers {
		for _, f := range families {
			lastGood.WithLabelValues(server, f).Set(0)
		}
	}
}

// family returns 0 for an IPv4 address, 1 for an IPv6 one.
func family(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}
