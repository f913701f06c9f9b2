// Package prereq lets a test say that something it needs from outside Go
// (a Debian package, root, a module from the proxy) is missing: on a user's
// machine the test skips with that message, and under CI=true it fails, so
// that a missing install step in .ci/run cannot hide behind a skip. It
// installs nothing itself.
package prereq

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true, or any value
// strconv.ParseBool reads as true).
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Missing ends t because a prerequisite is missing: it skips, or fails
// under CI.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI=true: a missing prerequisite fails instead of skipping)", msg)
	}
	t.Skip("skipping: " + msg)
}

// Program returns the path of the program name, or ends t through Missing,
// naming the Debian package that installs it.
func Program(t testing.TB, name, debianPackage string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed (Debian package %s)", name, debianPackage)
	}
	return path
}

// Root ends t through Missing unless the test runs as root; why says what
// needs it.
func Root(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "not root: %s", why)
	}
}
