// Package mdsnippet reads the fenced code snippets of a Markdown file, for
// the test that runs the READMEs' shell and Corefile snippets as shown. It
// only reads: running them is the test's business.
package mdsnippet

import (
	"fmt"
	"regexp"
	"strings"
)

// Snippet is one fenced code block of a Markdown file.
type Snippet struct {
	Line    int    // line of the opening fence, from 1
	Lang    string // the fence's info string: "sh", "corefile", "yaml", ...
	Section string // the title of the level-2 heading above it ("" before the first)
	// NotTested is the reason given by a `<!-- not tested: REASON -->` line
	// right before the fence (blank lines between are allowed), or "".
	NotTested string
	Text      string // the content, without the fence's indentation, ending in "\n"
}

var (
	fence     = regexp.MustCompile("^( *)(```+|~~~+) *([^ `]*) *$")
	notTested = regexp.MustCompile(`^<!-- not tested: (.+) -->$`)
)

// Parse returns the fenced snippets of the Markdown text md, in order. A
// fence left open is an error, so that a broken file is not read as having
// fewer snippets.
func Parse(md string) ([]Snippet, error) {
	var (
		out     []Snippet
		section string
		lastTxt string // the last non-blank line outside snippets
	)
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := fence.FindStringSubmatch(line)
		if m == nil {
			if t := strings.TrimSpace(line); t != "" {
				lastTxt = t
				if strings.HasPrefix(line, "## ") {
					section = strings.TrimSpace(strings.TrimPrefix(line, "## "))
				}
			}
			continue
		}
		s := Snippet{Line: i + 1, Lang: m[3], Section: section}
		if r := notTested.FindStringSubmatch(lastTxt); r != nil {
			s.NotTested = r[1]
		}
		indent, marker := m[1], m[2]
		var body strings.Builder
		closed := false
		for i++; i < len(lines); i++ {
			if c := fence.FindStringSubmatch(lines[i]); c != nil && c[2] == marker && c[3] == "" {
				closed = true
				break
			}
			body.WriteString(strings.TrimPrefix(lines[i], indent) + "\n")
		}
		if !closed {
			return nil, fmt.Errorf("line %d: the fence is never closed", s.Line)
		}
		s.Text = body.String()
		out = append(out, s)
		lastTxt = ""
	}
	return out, nil
}
