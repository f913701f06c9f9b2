package corednstest

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

// TestNoCorefileToReload checks that caddy.LoadCaddyfile, where the reload
// plugin looks for a changed Corefile, fails in a test process, rather than
// return CoreDNS's default Corefile, which the plugin would start in place
// of the test's.
func TestNoCorefileToReload(t *testing.T) {
	// caddy wraps the loader's error in text (%v).
	if in, err := caddy.LoadCaddyfile("dns"); err == nil || !strings.Contains(err.Error(), errNoCorefile.Error()) {
		t.Fatalf("caddy.LoadCaddyfile returned %v, %v; want %v", in, err, errNoCorefile)
	}
}

// TestFreeTCPPortNeverRepeats asks for many ports, each closed at once: none
// comes twice, although the system could offer a closed one again.
func TestFreeTCPPortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		port, err := FreeTCPPort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d chosen twice", port)
		}
		seen[port] = true
	}
}
