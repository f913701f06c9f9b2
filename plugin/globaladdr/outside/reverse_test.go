package outside

import "testing"

// TestReversePrefix checks which prefix a reverse-mapping name stands for.
func TestReversePrefix(t *testing.T) {
	tests := []struct {
		name string
		want string // "" when it is no reverse name
	}{
		{"51.0.168.192.in-addr.arpa.", "192.168.0.51/32"},
		{"0.168.192.IN-ADDR.ARPA.", "192.168.0.0/24"},
		{"51.0/25.0.168.192.in-addr.arpa.", "192.168.0.0/24"},
		{"ptr-51.0.168.192.in-addr.arpa.", "192.168.0.0/24"},
		{"192.in-addr.arpa.", "192.0.0.0/8"},
		{"1.2.3.4.5.in-addr.arpa.", "5.4.3.2/32"},
		{"051.0.168.192.in-addr.arpa.", "192.168.0.0/24"},
		{"256.168.192.in-addr.arpa.", "192.168.0.0/16"},
		{"in-addr.arpa.", ""},
		{"example.com.", ""},
		{"d.f.ip6.arpa.", "fd00::/8"},
		{"1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", "fd00::1/128"},
		{"x.8.b.d.0.1.0.0.2.ip6.arpa.", "2001:db8::/32"},
		{"ip6.arpa.", ""},
	}
	for _, tc := range tests {
		pr, ok := reversePrefix(tc.name)
		got := ""
		if ok {
			got = pr.String()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestInternalReverse checks that the reverse names of internal addresses,
// map sources included, are hidden, and only those.
func TestInternalReverse(t *testing.T) {
	p := New(Options{TTL: -1, Maps: []Map{mapOf("198.51.100.0/24", "192.0.2.0/24")}})
	for name, want := range map[string]bool{
		"51.0.168.192.in-addr.arpa.":    true,
		"168.192.in-addr.arpa.":         true,
		"192.in-addr.arpa.":             false, // 192/8 is not all internal
		"7.100.51.198.in-addr.arpa.":    true,  // a map source
		"20.113.0.203.in-addr.arpa.":    false,
		"0.0.0.0.0.0.0.0.d.f.ip6.arpa.": true,
		"8.b.d.0.1.0.0.2.ip6.arpa.":     false,
	} {
		if got := p.internalReverse(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}
