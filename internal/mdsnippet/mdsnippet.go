// Package mdsnippet reads the fenced code snippets of a Markdown file, for
// the test that runs the READMEs' shell and Corefile snippets as shown. It
// only reads: running them is the test's business.
//
// HTML comments right before a fence (blank lines between are allowed) say
// how the test treats it; the reader of the rendered file does not see them:
//
//	<!-- not tested: REASON -->    it does not run here, for REASON
//	<!-- tested by TestNAME -->    TestNAME runs it, not the generic tests
//	<!-- given: COMMAND -->        what the reader has before it, made by a shell command
//	<!-- claim: CLAIM -->          what it does, checked with a query (see Claim)
//
// Any other comment right before a fence is an error, so that a mistyped
// marker is not taken for prose.
package mdsnippet

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/miekg/dns"
)

// Snippet is one fenced code block of a Markdown file.
type Snippet struct {
	Line    int    // line of the opening fence, from 1
	Lang    string // the fence's info string: "sh", "corefile", "yaml", ...
	Section string // the title of the level-2 heading above it ("" before the first)
	// NotTested is the reason of a `<!-- not tested: REASON -->`, or "".
	NotTested string
	// TestedBy is the test of a `<!-- tested by TestNAME -->`, or "".
	TestedBy string
	// Given are the shell commands of its `<!-- given: COMMAND -->`s, in order.
	Given []string
	// Claims are its `<!-- claim: CLAIM -->`s, in order.
	Claims []Claim
	Text   string // the content, without the fence's indentation, ending in "\n"
}

// Claim is what a Corefile snippet claims a client gets, written
//
//	from CLIENT[ to SERVER[:PORT]]: NAME [TYPE] is WANT
//
// as in `from 192.168.0.5: app.example.com is 192.168.0.51`: a client at
// the address CLIENT asking the snippet's CoreDNS for NAME's records of
// TYPE (A by default) gets WANT.
type Claim struct {
	From netip.Addr
	// Server is the address asked, invalid when the claim names none; Port
	// is 0 when it names none.
	Server netip.Addr
	Port   uint16
	Name   string
	Type   string
	// Want is the answer's data as `dig +short` prints it, its records
	// sorted and separated by spaces; or, for an answer without records,
	// its rcode (NXDOMAIN, REFUSED, SERVFAIL, ...) or NODATA.
	Want string
}

// String returns the claim as a marker writes it.
func (c Claim) String() string {
	to := ""
	switch {
	case c.Server.IsValid() && c.Port != 0:
		to = " to " + netip.AddrPortFrom(c.Server, c.Port).String()
	case c.Server.IsValid():
		to = " to " + c.Server.String()
	}
	return fmt.Sprintf("from %s%s: %s %s is %s", c.From, to, c.Name, c.Type, c.Want)
}

var (
	fence    = regexp.MustCompile("^( *)(```+|~~~+) *([^ `]*) *$")
	comment  = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)
	testedBy = regexp.MustCompile(`^tested by (Test\w+)$`)
	claimRe  = regexp.MustCompile(`^from (\S+?)(?: to (\S+))?: (\S+)(?: ([A-Z0-9]+))? is (.+)$`)
)

// Parse returns the fenced snippets of the Markdown text md, in order. A
// fence left open, or a malformed marker before a fence, is an error, so
// that a broken file is not read as having fewer snippets or claims.
func Parse(md string) ([]Snippet, error) {
	var (
		out     []Snippet
		section string
		markers []string // the comments since the last other non-blank line
		at      []int    // their lines
	)
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := fence.FindStringSubmatch(line)
		if m == nil {
			t := strings.TrimSpace(line)
			switch c := comment.FindStringSubmatch(t); {
			case c != nil:
				markers, at = append(markers, c[1]), append(at, i+1)
			case t != "":
				markers, at = nil, nil
				if strings.HasPrefix(line, "## ") {
					section = strings.TrimSpace(strings.TrimPrefix(line, "## "))
				}
			}
			continue
		}
		s := Snippet{Line: i + 1, Lang: m[3], Section: section}
		for j, mk := range markers {
			if err := s.mark(mk); err != nil {
				return nil, fmt.Errorf("line %d: %v", at[j], err)
			}
		}
		if s.NotTested != "" && (s.TestedBy != "" || len(s.Given)+len(s.Claims) > 0) {
			return nil, fmt.Errorf("line %d: a fence not tested has no test, givens or claims", s.Line)
		}
		markers, at = nil, nil
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
	}
	return out, nil
}

// mark records on s the marker mk, a comment's text.
func (s *Snippet) mark(mk string) error {
	switch kind, arg, _ := strings.Cut(mk, ":"); {
	case kind == "not tested" && strings.TrimSpace(arg) != "":
		s.NotTested = strings.TrimSpace(arg)
	case kind == "given" && strings.TrimSpace(arg) != "":
		s.Given = append(s.Given, strings.TrimSpace(arg))
	case kind == "claim":
		c, err := ParseClaim(strings.TrimSpace(arg))
		if err != nil {
			return err
		}
		s.Claims = append(s.Claims, c)
	case testedBy.MatchString(mk):
		s.TestedBy = testedBy.FindStringSubmatch(mk)[1]
	default:
		return fmt.Errorf("%q before a fence is no marker: not tested: REASON, tested by TestNAME, given: COMMAND, claim: CLAIM", mk)
	}
	return nil
}

// ParseClaim reads a claim: `from CLIENT[ to SERVER[:PORT]]: NAME [TYPE] is WANT`.
func ParseClaim(text string) (Claim, error) {
	m := claimRe.FindStringSubmatch(text)
	if m == nil {
		return Claim{}, fmt.Errorf("claim %q: want `from CLIENT[ to SERVER[:PORT]]: NAME [TYPE] is WANT`", text)
	}
	c := Claim{Name: m[3], Type: m[4], Want: strings.Join(strings.Fields(m[5]), " ")}
	var err error
	if c.From, err = netip.ParseAddr(m[1]); err != nil {
		return Claim{}, fmt.Errorf("claim %q: the client: %v", text, err)
	}
	if m[2] != "" {
		if ap, err := netip.ParseAddrPort(m[2]); err == nil {
			c.Server, c.Port = ap.Addr(), ap.Port()
		} else if c.Server, err = netip.ParseAddr(m[2]); err != nil {
			return Claim{}, fmt.Errorf("claim %q: the server: %v", text, err)
		}
	}
	if c.Type == "" {
		c.Type = "A"
	}
	if _, ok := dns.StringToType[c.Type]; !ok {
		return Claim{}, fmt.Errorf("claim %q: unknown type %s", text, c.Type)
	}
	return c, nil
}
