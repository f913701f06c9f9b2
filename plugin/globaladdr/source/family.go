package source

import "net/netip"

// family returns 0 for an IPv4 address, 1 for an IPv6 one.
func family(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

// ofFamily returns the addresses of addrs of family fam (see family).
func ofFamily(addrs []netip.Addr, fam int) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if family(a) == fam {
			out = append(out, a)
		}
	}
	return out
}

// joinAddrs writes addrs separated by commas.
func joinAddrs(addrs []netip.Addr) string {
	var b []byte
	for i, a := range addrs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = a.AppendTo(b)
	}
	return string(b)
}
