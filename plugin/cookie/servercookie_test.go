package cookie

import (
	"encoding/hex"
	"net/netip"
	"testing"
	"time"
)

// TestServerCookieRFC9018 checks serverCookie against the test vectors of
// RFC 9018's appendix A.2 (the interoperable format, made by the server
// whose secret they give).
func TestServerCookieRFC9018(t *testing.T) {
	for _, tc := range []struct {
		secret, client, addr string
		time                 int64
		want                 string
	}{
		{"e5e973e5a6b2a43f48e7dc849e37bfcf", "2464c4abcf10c957", "198.51.100.100", 1559731985, "010000005cf79f111f8130c3eee29480"},
		{"e5e973e5a6b2a43f48e7dc849e37bfcf", "2464c4abcf10c957", "198.51.100.100", 1559734385, "010000005cf7a871d4a564a1442aca77"},
		{"e5e973e5a6b2a43f48e7dc849e37bfcf", "fc93fc62807ddb86", "203.0.113.203", 1559734700, "010000005cf7a9acf73a7810aca2381e"},
		{"dd3bdf9344b678b185a6f5cb60fca715", "22681ab97d52c298", "2001:db8:220:1:59de:d0f4:8769:82b8", 1559741817, "010000005cf7c57926556bd0934c72f8"},
		{"445536bcd2513298075a5d379663c962", "22681ab97d52c298", "2001:db8:220:1:59de:d0f4:8769:82b8", 1559741961, "010000005cf7c609a6bb79d16625507a"},
	} {
		var s secret
		if n, err := hex.Decode(s[:], []byte(tc.secret)); err != nil || n != len(s) {
			t.Fatalf("secret %s: %v", tc.secret, err)
		}
		client, _ := hex.DecodeString(tc.client)
		got := hex.EncodeToString(serverCookie(s, client, netip.MustParseAddr(tc.addr), time.Unix(tc.time, 0)))
		if got != tc.want {
			t.Errorf("client cookie %s from %s at %d: server cookie %s, want %s", tc.client, tc.addr, tc.time, got, tc.want)
		}
	}
}
