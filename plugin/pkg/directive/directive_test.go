package directive

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// TestBare checks where a bare directive stands, and the errors that name
// the line and the token of a directive given arguments, a block, or twice.
func TestBare(t *testing.T) {
	for _, tc := range []struct {
		input, where, err string
	}{
		{"bare", "Testfile:1", ""},
		{"bare x", "", `Testfile:1 - Error during parsing: bare takes no arguments, got "x"`},
		{"bare {\n x\n}", "", `Testfile:2 - Error during parsing: bare takes no block, got "x"`},
		{"bare\nbare", "", `Testfile:2 - Error during parsing: bare is given twice in this server block`},
	} {
		where, err := Bare(caddy.NewTestController("dns", tc.input), "bare")
		if where != tc.where || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: got %q, %v; want %q, %q", tc.input, where, err, tc.where, tc.err)
		}
	}
}

func TestRooted(t *testing.T) {
	c := caddy.NewTestController("dns", "x")
	if got := Rooted(c, "ca.pem"); got != "ca.pem" {
		t.Errorf("without root: %q, want ca.pem", got)
	}
	dnsserver.GetConfig(c).Root = "/etc/coredns"
	for path, want := range map[string]string{"ca.pem": "/etc/coredns/ca.pem", "tls/ca.pem": "/etc/coredns/tls/ca.pem", "/srv/ca.pem": "/srv/ca.pem"} {
		if got := Rooted(c, path); got != want {
			t.Errorf("root /etc/coredns, %q: %q, want %q", path, got, want)
		}
	}
}
