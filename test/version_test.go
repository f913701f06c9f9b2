package test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// releaseLine is the line CoreDNS prints after its version: the platform,
// the Go release and the commit built, which make sets (no trailing comma).
var releaseLine = regexp.MustCompile(`^linux/[a-z0-9]+, go1\.[0-9.]+, ([0-9a-f]{7,40})$`)

// versionLine is globaladdr's first line of `coredns -version`: CoreDNS's
// release and globaladdr's version, the git tag (v0.1.0, v0.1.0-3-gabc1234,
// -dirty) or VERSION's release with the commit (0.1.0-dev-gabc1234).
var versionLine = regexp.MustCompile(`^CoreDNS-1\.15\.[0-9]+ globaladdr-(v?[0-9]+\.[0-9]+\.[0-9]+(?:-dev-g([0-9a-f]+)|-[0-9]+-g([0-9a-f]+))?(?:-dirty)?)$`)

// TestVersion runs `./coredns -version` as make built it: its first line
// names globaladdr's version, its second the commit built (the commit the
// version names, if it names one), and README.md shows the same two lines,
// with another version, platform, Go release and commit.
func TestVersion(t *testing.T) {
	if _, err := os.Stat("../coredns"); err != nil {
		prereq.Missing(t, "TestVersion runs ../coredns: run make first")
	}
	out, err := exec.Command("../coredns", "-version").Output()
	if err != nil {
		t.Fatalf("coredns -version: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("coredns -version printed %d lines, want 2:\n%s", len(lines), out)
	}
	v := versionLine.FindStringSubmatch(lines[0])
	if v == nil {
		t.Errorf("coredns -version's first line %q does not name CoreDNS's and globaladdr's versions", lines[0])
	}
	r := releaseLine.FindStringSubmatch(lines[1])
	if r == nil {
		t.Fatalf("coredns -version's second line %q does not end with the commit built (make sets coremain.GitCommit)", lines[1])
	}
	if v != nil {
		if named := v[2] + v[3]; named != "" && !strings.HasPrefix(r[1], named) && !strings.HasPrefix(named, r[1]) {
			t.Errorf("coredns -version names commit %s in its version and %s after the Go release", named, r[1])
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if shown := anonymizeVersion(string(out)); !strings.Contains(anonymizeVersion(string(readme)), shown) {
		t.Errorf("README.md does not show what coredns -version prints (version, platform, Go release and commit aside):\n%s", out)
	}
}

// anonymizeVersion replaces in s what `coredns -version` prints that
// changes from build to build: globaladdr's version, the platform, the Go
// release and the commit.
func anonymizeVersion(s string) string {
	s = regexp.MustCompile(`globaladdr-v?[0-9]+\.[0-9]+\.[0-9]+[-a-z0-9]*`).ReplaceAllString(s, "globaladdr-VERSION")
	return regexp.MustCompile(`linux/[a-z0-9]+, go1\.[0-9.]+, [0-9a-f]{7,40}\b`).ReplaceAllString(s, "PLATFORM, GO, COMMIT")
}
