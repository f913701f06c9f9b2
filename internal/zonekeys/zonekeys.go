// Package zonekeys makes DNSSEC keys for tests with BIND's dnssec-keygen.
package zonekeys

import (
	"os/exec"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// Write makes a key (a CSK, ECDSAP256SHA256) of each of zones with
// dnssec-keygen, in a directory it returns.
func Write(t testing.TB, zones ...string) string {
	t.Helper()
	keygen := prereq.Program(t, "dnssec-keygen", "bind9-utils")
	dir := t.TempDir()
	for _, name := range zones {
		out, err := exec.Command(keygen, "-q", "-K", dir, "-a", "ECDSAP256SHA256", "-f", "KSK", name).CombinedOutput()
		if err != nil {
			t.Fatalf("dnssec-keygen %s: %v: %s", name, err, out)
		}
	}
	return dir
}
