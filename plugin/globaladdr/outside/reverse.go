package outside

import (
	"net/netip"
	"strconv"
	"strings"
)

// The reverse-mapping trees (RFC 1035 section 3.5, RFC 3596 section 2.5).
const (
	inAddrArpa = "in-addr.arpa."
	ip6Arpa    = "ip6.arpa."
)

// reversePrefix returns the prefix whose reverse-mapping name name is or
// lies below: the labels next to in-addr.arpa (decimal octets) or ip6.arpa
// (hexadecimal nibbles), read from the right as long as they are such. ok is
// false for other names, and for the trees' roots.
func reversePrefix(name string) (pr netip.Prefix, ok bool) {
	var (
		rest  string
		width int // bits per label
	)
	switch {
	case hasSuffixFold(name, "."+inAddrArpa):
		rest, width = name[:len(name)-len(inAddrArpa)-1], 8
	case hasSuffixFold(name, "."+ip6Arpa):
		rest, width = name[:len(name)-len(ip6Arpa)-1], 4
	default:
		return pr, false
	}
	var b [16]byte
	bits := 0
	for rest != "" && bits < 8*len(b) && (width == 4 || bits < 32) {
		label := rest
		if i := strings.LastIndexByte(rest, '.'); i >= 0 {
			label, rest = rest[i+1:], rest[:i]
		} else {
			rest = ""
		}
		v, ok := labelValue(label, width)
		if !ok {
			break
		}
		if width == 8 {
			b[bits/8] = byte(v)
		} else {
			b[bits/8] |= byte(v) << (4 - bits%8)
		}
		bits += width
	}
	if bits == 0 {
		return pr, false
	}
	if width == 8 {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte(b[:4])), bits), true
	}
	return netip.PrefixFrom(netip.AddrFrom16(b), bits), true
}

// labelValue reads a label of a reverse name: a decimal octet without
// leading zeros (width 8) or one hexadecimal nibble (width 4).
func labelValue(label string, width int) (uint64, bool) {
	if width == 4 {
		v, err := strconv.ParseUint(label, 16, 4)
		return v, err == nil && len(label) == 1
	}
	v, err := strconv.ParseUint(label, 10, 8)
	return v, err == nil && (label == "0" || label[0] != '0')
}

// hasSuffixFold reports whether s ends with suffix, ignoring ASCII case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}
