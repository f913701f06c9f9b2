package test

import (
	"strings"
	"testing"
)

// TestMadeUpAnswersRefused starts globaladdr in front of whoami and of
// erratic, whose answers are no host's records (the client's own address,
// 192.0.2.53): start-up stops, naming the plugin, globaladdr's line, the
// plugin after it and the fix. Without globaladdr, whoami starts.
func TestMadeUpAnswersRefused(t *testing.T) {
	for _, backend := range []string{"whoami", "erratic"} {
		_, err := tryStartCoreDNS(t, "example.com:{port:dns} {\n\tlog\n\tglobaladdr 203.0.113.10\n\t"+backend+"\n}\n")
		if err == nil {
			t.Errorf("globaladdr started in front of %s", backend)
			continue
		}
		for _, want := range []string{"plugin/globaladdr", "Corefile:3", `"globaladdr"`, backend + " in this server block", "a block of its own"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	}
	startCoreDNS(t, "example.com:{port:dns} {\n\twhoami\n}\n")
}
