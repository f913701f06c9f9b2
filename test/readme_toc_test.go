package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// tocEntry is a line of a table of contents (README.md's, a how-to's), or
// the entry a heading wants there.
type tocEntry struct {
	depth  int // 0 for a level-2 heading, 1 for a level-3 one
	title  string
	anchor string
}

func (e tocEntry) String() string {
	return fmt.Sprintf("%s- [%s](#%s)", strings.Repeat("  ", e.depth), e.title, e.anchor)
}

var (
	tocLine = regexp.MustCompile(`^( *)- \[(.+)\]\(#([^)]+)\)$`)
	heading = regexp.MustCompile(`^(###?) (.+)$`)
)

// TestREADMETableOfContents holds the table of contents of README.md and
// of each how-to of docs/, the list right after its title, to its
// headings: it lists every level-2 and level-3 heading (those in fenced
// code aside), in order, each by its text and linked to its anchor as
// GitHub makes it, the level-3 ones indented under theirs; and nothing
// else.
func TestREADMETableOfContents(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("docs/ holds no how-to")
	}
	for _, file := range append([]string{"../README.md"}, docs...) {
		name := strings.TrimPrefix(file, "../")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkTableOfContents(t, name, string(b))
		})
	}
}

// checkTableOfContents fails t unless the Markdown text md of the file
// name has a table of contents that matches its headings.
func checkTableOfContents(t *testing.T, name, md string) {
	t.Helper()
	var toc, want []tocEntry
	inTOC, inFence, seenTOC := false, false, false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if inFence {
			continue
		}
		if m := tocLine.FindStringSubmatch(line); m != nil && !seenTOC {
			inTOC = true
			toc = append(toc, tocEntry{len(m[1]) / 2, m[2], m[3]})
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "- ") && !seenTOC {
			t.Errorf("%s:%d: a table of contents entry without a link to a heading: %q", name, i+1, line)
			continue
		}
		if inTOC && strings.TrimSpace(line) == "" {
			inTOC, seenTOC = false, true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			want = append(want, tocEntry{len(m[1]) - 2, m[2], githubAnchor(m[2])})
		}
	}
	if len(want) == 0 {
		t.Errorf("%s has no level-2 heading", name)
	}
	if !slices.Equal(toc, want) {
		var got, wantText strings.Builder
		for _, e := range toc {
			fmt.Fprintln(&got, e)
		}
		for _, e := range want {
			fmt.Fprintln(&wantText, e)
		}
		t.Errorf("%s's table of contents:\n%s\nits headings want:\n%s", name, got.String(), wantText.String())
	}
}

// githubAnchor returns the anchor GitHub gives a heading's text: lower
// case, spaces as hyphens, punctuation other than hyphens and underscores
// dropped.
func githubAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
