package source

import (
	"net/netip"
	"testing"
)

func TestRefusal(t *testing.T) {
	for addr, want := range map[string]string{
		"203.0.113.1": "", "198.51.100.1": "", "192.0.2.1": "", "2001:db8::1": "", "3fff::1": "",
		"8.8.8.8": "", "2a00:1450::1": "",
		"100.64.0.1": refusedCGNAT, "100.127.255.255": refusedCGNAT,
		"10.0.0.1": refusedPrivate, "172.16.0.1": refusedPrivate, "fd12::1": refusedULA, "fe80::1": refusedLinkLocal,
		"127.0.0.1": refusedLoopback, "::1": refusedLoopback, "169.254.0.1": refusedLinkLocal,
		"0.0.0.0": refusedUnspecified, "::": refusedUnspecified, "224.0.0.1": refusedMulticast,
		"ff02::1": refusedMulticast, "240.0.0.1": refusedReserved, "198.18.0.1": refusedReserved,
		"192.0.0.8": refusedReserved, "::ffff:203.0.113.1": refusedReserved, "2001::1": refusedReserved,
		"64:ff9b::1": refusedReserved,
	} {
		if got := refusal(netip.MustParseAddr(addr), internal); got != want {
			t.Errorf("refusal(%s) = %q, want %q", addr, got, want)
		}
	}
	// A public address inside the block's internal ranges (a map's FROM)
	// is refused too.
	if got := refusal(netip.MustParseAddr("198.51.100.9"), internalIn("198.51.100.0/24")); got != refusedInternal {
		t.Errorf("refusal of an internal public address = %q, want %q", got, refusedInternal)
	}
}
