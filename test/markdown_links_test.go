package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// linkedDocs are the Markdown files whose relative links
// TestMarkdownLinks holds to what they link to.
var linkedDocs = []string{"../README.md", "../docs/*.md", "../CONTRIBUTING.md", "../CHANGELOG.md",
	"../BENCHMARKS.md", "../bench/HISTORY.md", "../charts/globaladdr/README.md", "../plugin/*/README.md",
	"../plugin/*/DESIGN.md", "../corefile-examples/README.md"}

var (
	// linkTarget is the target of an inline link or image, `](TARGET)` or
	// `](TARGET "TITLE")`.
	linkTarget = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// mdHeading is a heading of any level, its closing #s aside.
	mdHeading = regexp.MustCompile(`^ {0,3}#{1,6} +(.+?)(?: +#+)? *$`)
	// scheme starts an absolute URL (https:, mailto:, ...).
	scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// TestMarkdownLinks follows every relative link of linkedDocs (those in
// fenced code or code spans aside): the file or directory it names must
// exist, and its #anchor, in a Markdown file, must be one of that file's
// headings as GitHub makes their anchors. A page moved or a heading
// renamed then cannot leave a link pointing nowhere.
func TestMarkdownLinks(t *testing.T) {
	anchors := map[string]map[string]bool{} // by file, as read
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = headingAnchors(string(b))
		return anchors[file]
	}
	for _, pattern := range linkedDocs {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no file (%v)", pattern, err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(file, "../")
			for _, m := range linkTarget.FindAllStringSubmatch(stripCode(string(b)), -1) {
				target := m[1]
				if scheme.MatchString(target) {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s: a link to %s, which does not exist", name, target)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(resolved, ".md") && !anchorsOf(resolved)[anchor] {
					t.Errorf("%s: a link to %s: %s has no heading with the anchor #%s", name, target, strings.TrimPrefix(resolved, "../"), anchor)
				}
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of the
// Markdown text md (those in fenced code aside): githubAnchor's, a repeated
// one numbered -1, -2, ... after its first.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(stripFences(md), "\n") {
		m := mdHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := githubAnchor(m[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// stripFences returns md with the lines of its fenced code blocks blank.
func stripFences(md string) string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, line := range lines {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:len(t)-len(strings.TrimLeft(t, t[:1]))]
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// stripCode returns md without its fenced code blocks and code spans (a
// run of backticks up to the next run of as many).
func stripCode(md string) string {
	md = stripFences(md)
	var b strings.Builder
	for {
		i := strings.IndexByte(md, '`')
		if i < 0 {
			b.WriteString(md)
			return b.String()
		}
		b.WriteString(md[:i])
		n := backticks(md[i:])
		rest := md[i+n:]
		end := closingRun(rest, n)
		if end < 0 { // a literal run, no span
			b.WriteString(md[i : i+n])
			md = rest
			continue
		}
		md = rest[end+n:]
	}
}

// closingRun returns where in s the first run of exactly n backticks
// starts, or -1.
func closingRun(s string, n int) int {
	for j := 0; j < len(s); {
		k := strings.IndexByte(s[j:], '`')
		if k < 0 {
			return -1
		}
		k += j
		m := backticks(s[k:])
		if m == n {
			return k
		}
		j = k + m
	}
	return -1
}

// backticks returns the length of the run of backticks s starts with.
func backticks(s string) int { return len(s) - len(strings.TrimLeft(s, "`")) }
