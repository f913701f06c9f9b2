package source

import (
	"net/netip"
	"testing"
)

// FuzzPrefixValue feeds parsePrefixValue arbitrary values: what it accepts
// is an IPv6 prefix of FROM's length, masked, that the checks accept.
func FuzzPrefixValue(f *testing.F) {
	for _, s := range []string{"2001:db8::/64", "2001:db8::1", "2001:db8::/56", "# x\n2001:db8::/64 # y", "fd00::/64"} {
		f.Add(s)
	}
	from := netip.MustParsePrefix("fd00::/64")
	f.Fuzz(func(t *testing.T, text string) {
		to, _, err := parsePrefixValue(text, from, internal)
		if err != nil {
			return
		}
		if !to.Addr().Is6() || to.Bits() != 64 || to != to.Masked() || refusal(to.Addr(), internal) != "" {
			t.Fatalf("accepted %v", to)
		}
	})
}
