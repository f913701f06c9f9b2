// Package setuptest runs the setup tables of this repository's plugins, in
// the shape of CoreDNS's own setup tests: each Corefile snippet either sets
// the plugin up, or fails with an error that names the plugin, the file
// (Testfile, as caddy's test controller calls it) and the expected content.
// It knows no plugin: each test hands it the plugin's name and setup.
package setuptest

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

// Case is one row of a setup table. It names a struct type without naming a
// type of its own, so that tables may list their rows positionally, as
// CoreDNS's do.
type Case = struct {
	Input              string
	ShouldErr          bool
	ExpectedErrContent string
}

// Run sets each case's input up with setup, as plugin (e.g. "rrl") is set up
// in a server block of type dns, and fails t where the outcome differs from
// the case.
func Run(t *testing.T, plugin string, setup func(*caddy.Controller) error, cases []Case) {
	t.Helper()
	for i, tc := range cases {
		err := setup(caddy.NewTestController("dns", tc.Input))
		if tc.ShouldErr != (err != nil) {
			t.Errorf("test %d (%q): expected error %v, got %v", i, tc.Input, tc.ShouldErr, err)
			continue
		}
		if err == nil {
			continue
		}
		for _, want := range []string{"plugin/" + plugin + ":", "Testfile:", tc.ExpectedErrContent} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("test %d (%q): error %q does not contain %q", i, tc.Input, err, want)
			}
		}
	}
}
