package probe

import "net/netip"

// ParseAddr parses s as a global address is written, in a probe's answer,
// a source's value and the Corefile: an IPv4 or IPv6 address without a
// zone; an IPv4-mapped IPv6 address is not one.
func ParseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	return a, err == nil && a.Zone() == "" && !a.Is4In6()
}
