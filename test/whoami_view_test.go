package test

import (
	"strings"
	"testing"
)

// TestWhoamiBehindViewRefused starts globaladdr in front of whoami, which
// answers each client with its own address, no host's: start-up stops,
// naming the plugin, globaladdr's line, whoami and the fix. Without
// globaladdr, whoami starts; globaladdr in front of erratic, whose
// 192.0.2.53 is no internal address, starts too.
func TestWhoamiBehindViewRefused(t *testing.T) {
	_, err := tryStartCoreDNS(t, "example.com:{port:dns} {\n\tlog\n\tglobaladdr 203.0.113.10\n\twhoami\n}\n")
	if err == nil {
		t.Fatal("globaladdr started in front of whoami")
	}
	for _, want := range []string{"plugin/globaladdr", "Corefile:3", `"globaladdr"`, "whoami in this server block", "a block of its own"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	startCoreDNS(t, "example.com:{port:dns} {\n\twhoami\n}\n")
	startCoreDNS(t, "example.com:{port:dns} {\n\tglobaladdr 203.0.113.10\n\terratic\n}\n")
}
