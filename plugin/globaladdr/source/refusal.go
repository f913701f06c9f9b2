package source

import (
	"fmt"
	"net/netip"
	"slices"
)

// The reasons of coredns_globaladdr_source_refused_total: why a learned
// address is not served.
const (
	// refusedCGNAT: shared address space 100.64.0.0/10 (RFC 6598), the
	// inside of a carrier-grade NAT.
	refusedCGNAT = "cgnat"
	// refusedPrivate: RFC 1918 (10/8, 172.16/12, 192.168/16).
	refusedPrivate = "private"
	// refusedULA: IPv6 unique local fc00::/7.
	refusedULA = "ula"
	// refusedLoopback: 127/8, ::1.
	refusedLoopback = "loopback"
	// refusedLinkLocal: 169.254/16, fe80::/10.
	refusedLinkLocal = "link_local"
	// refusedUnspecified: 0.0.0.0, ::.
	refusedUnspecified = "unspecified"
	// refusedMulticast: 224/4, ff00::/8.
	refusedMulticast = "multicast"
	// refusedReserved: any other range the Internet does not route
	// (0/8, 192.0.0/24, 198.18/15, 240/4, IPv6 outside 2000::/3, ...).
	refusedReserved = "reserved"
	// refusedInternal: inside the block's internal ranges or a map's
	// FROM: serving it would leak or loop.
	refusedInternal = "internal"
	// refusedPrefixLength: a written IPv6 prefix whose length is not
	// that of the map's FROM.
	refusedPrefixLength = "prefix_length"
)

var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	// documentation holds the documentation prefixes, accepted as global
	// so that examples and tests can use them.
	documentation = []netip.Prefix{
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("198.51.100.0/24"),
		netip.MustParsePrefix("203.0.113.0/24"),
		netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("3fff::/20"),
	}
	// reserved4 holds the IPv4 ranges that are not globally reachable,
	// beside those netip classifies (RFC 6890's registry).
	reserved4 = []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("240.0.0.0/4"),
	}
	// global6 is IPv6's global unicast space; anything outside it (and
	// not classified otherwise) is reserved.
	global6 = netip.MustParsePrefix("2000::/3")
	// reserved6 holds the ranges inside global6 that are not globally
	// reachable.
	reserved6 = []netip.Prefix{
		netip.MustParsePrefix("2001::/23"), // IETF protocol assignments
	}
)

// refusal returns why a, a learned address, can't be served as a global
// address: one of the refused reasons; "" when it can. internal reports the
// block's internal addresses.
func refusal(a netip.Addr, internal func(netip.Addr) bool) string {
	switch {
	case !a.IsValid() || a.Zone() != "" || a.Is4In6():
		return refusedReserved
	case slices.ContainsFunc(documentation, func(p netip.Prefix) bool { return p.Contains(a) }):
		break
	case cgnat.Contains(a):
		return refusedCGNAT
	case a.IsPrivate() && a.Is4():
		return refusedPrivate
	case a.IsPrivate():
		return refusedULA
	case a.IsLoopback():
		return refusedLoopback
	case a.IsLinkLocalUnicast():
		return refusedLinkLocal
	case a.IsUnspecified():
		return refusedUnspecified
	case a.IsMulticast():
		return refusedMulticast
	case a.Is4() && slices.ContainsFunc(reserved4, func(p netip.Prefix) bool { return p.Contains(a) }), a.Is6() && (!global6.Contains(a) || slices.ContainsFunc(reserved6, func(p netip.Prefix) bool { return p.Contains(a) })):
		return refusedReserved
	}
	if internal(a) {
		return refusedInternal
	}
	return ""
}

// refusalWords says in words why an address refused for reason can't be
// served.
func refusalWords(reason string) string {
	switch reason {
	case refusedCGNAT:
		return "this is carrier-grade NAT (shared address space 100.64.0.0/10, RFC 6598); the Internet cannot reach it"
	case refusedPrivate:
		return "this is a private address (RFC 1918); the Internet cannot reach it"
	case refusedULA:
		return "this is a unique local IPv6 address (fc00::/7); the Internet cannot reach it"
	case refusedInternal:
		return "it is internal to this server block (internal or map), and is never served as a global address"
	case refusedPrefixLength:
		return "its length is not that of the map's FROM"
	}
	return fmt.Sprintf("this is a %s address; the Internet cannot reach it", reason)
}
