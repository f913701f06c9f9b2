package test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// changelogHeading is a release heading of Keep a Changelog 1.1.0:
// `## [Unreleased]`, or `## [VERSION] - YYYY-MM-DD`.
var changelogHeading = regexp.MustCompile(`^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$`)

// changelogLink is a link reference definition: `[NAME]: URL`.
var changelogLink = regexp.MustCompile(`^\[([^\]]+)\]: (\S+)$`)

// TestChangelog holds CHANGELOG.md to Keep a Changelog 1.1.0 and to the
// release in VERSION: an Unreleased section first, the newest release's
// heading naming VERSION (the tag a release makes is vVERSION), each release
// dated, and a link reference for every heading and none for a heading that
// is not there, Unreleased comparing the newest tag with HEAD.
func TestChangelog(t *testing.T) {
	b, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	v, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(v))

	var headings []string
	links := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if m := changelogHeading.FindStringSubmatch(line); m != nil {
			if m[1] != "Unreleased" && m[2] == "" {
				t.Errorf("CHANGELOG.md:%d: release %s without its date (`## [%s] - YYYY-MM-DD`)", i+1, m[1], m[1])
			}
			headings = append(headings, m[1])
		} else if strings.HasPrefix(line, "## ") {
			t.Errorf("CHANGELOG.md:%d: %q is no release heading (`## [Unreleased]` or `## [VERSION] - YYYY-MM-DD`)", i+1, line)
		}
		if m := changelogLink.FindStringSubmatch(line); m != nil {
			links[m[1]] = m[2]
		}
	}
	if len(headings) < 2 || headings[0] != "Unreleased" {
		t.Fatalf("CHANGELOG.md's releases %v: want [Unreleased] first, then the releases, newest first", headings)
	}
	if headings[1] != version {
		t.Errorf("CHANGELOG.md's newest release is %s, VERSION says %s", headings[1], version)
	}
	for _, h := range headings {
		if _, ok := links[h]; !ok {
			t.Errorf("CHANGELOG.md: [%s] has no link reference (`[%s]: URL` at the bottom)", h, h)
		}
	}
	for name := range links {
		if !slices.Contains(headings, name) {
			t.Errorf("CHANGELOG.md: the link reference [%s] names no release heading", name)
		}
	}
	if want := "/compare/v" + version + "...HEAD"; !strings.HasSuffix(links["Unreleased"], want) {
		t.Errorf("CHANGELOG.md: [Unreleased] links %s, want the comparison of v%s with HEAD (…%s)", links["Unreleased"], version, want)
	}
}
