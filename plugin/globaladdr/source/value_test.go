package source

import (
	"fmt"
	"strings"
	"testing"
)

func TestSourceValue(t *testing.T) {
	// What the plugin counts internal: its ranges, and the FROM of a map
	// 198.51.100.0/24 203.0.113.0/24.
	internal := internalIn("10.0.0.0/8", "192.168.0.0/16", "fc00::/7", "198.51.100.0/24")
	tests := []struct {
		text    string
		want    string // the addresses; "" when the value is refused
		wantErr string
	}{
		{"203.0.113.10", "[203.0.113.10]", ""},
		{"203.0.113.10\n", "[203.0.113.10]", ""},
		{"  203.0.113.10\t2001:db8::10 \r\n", "[203.0.113.10 2001:db8::10]", ""},
		{"# the WAN address, written by the router\n203.0.113.10 # uplink 1\n203.0.113.20 # uplink 2\n", "[203.0.113.10 203.0.113.20]", ""},
		{"203.0.113.10 203.0.113.10 2001:DB8::10 2001:db8::10", "[203.0.113.10 2001:db8::10]", ""},
		{"203.0.113.10#no space before the comment", "[203.0.113.10]", ""},

		{"", "", "the value holds no address"},
		{" \n\t", "", "the value holds no address"},
		{"# 203.0.113.10", "", "the value holds no address"},
		{"203.0.113.10 garbage", "", `"garbage" is not an IPv4 or IPv6 address`},
		{"203.0.113.10,203.0.113.11", "", `"203.0.113.10,203.0.113.11" is not an IPv4 or IPv6 address`},
		{"203.0.113.0/24", "", `"203.0.113.0/24" is not`},
		{"fe80::1%eth0", "", `"fe80::1%eth0" is not`},
		{"::ffff:203.0.113.10", "", `"::ffff:203.0.113.10" is not`},
		{"203.0.113.10 192.168.0.51", "", "192.168.0.51 is internal"},
		{"fd00::1", "", "fd00::1 is internal"},
		{"198.51.100.7", "", "198.51.100.7 is internal"}, // a map's FROM counts as internal
		{"\x00\x01\x02", "", `"\x00\x01\x02" is not`},
		{strings.Repeat("x", 100), "", `"` + strings.Repeat("x", 64) + `" is not`},
		{strings.Repeat("203.0.113.10 ", maxValue/13+1), "", "larger than 65536 bytes"},
	}
	for _, tc := range tests {
		addrs, err := parseValue(tc.text, internal)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%.40q: unexpected error %v", tc.text, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%.40q: error %v, want one containing %q", tc.text, err, tc.wantErr)
		case tc.wantErr == "" && fmt.Sprint(addrs) != tc.want:
			t.Errorf("%.40q: addresses %v, want %s", tc.text, addrs, tc.want)
		}
	}
}
