package directive

import (
	"strings"

	"github.com/coredns/caddy"
)

// Unknown is the error for property, which the directive does not take, at
// the token c is at. When one of known, the properties it takes, is what a
// slip of the keyboard makes of property (a letter wrong, missing, extra,
// or two swapped, the case aside), the error names it: "did you mean".
func Unknown(c *caddy.Controller, property string, known []string) error {
	if near := nearest(property, known); near != "" {
		return c.Errf("unknown property %q: did you mean %q?", property, near)
	}
	return c.Errf("unknown property %q", property)
}

// nearest returns the one word of known closest to word, within one edit
// for a word of up to four letters and two for a longer one, and fewer
// edits than word has letters; "" when none is, or two are equally close.
func nearest(word string, known []string) string {
	word = strings.ToLower(word)
	limit := min(1, len(word)-1)
	if len(word) > 4 {
		limit = 2
	}
	best, bestDistance, tie := "", limit+1, false
	for _, k := range known {
		switch d := distance(word, k); {
		case d < bestDistance:
			best, bestDistance, tie = k, d, false
		case d == bestDistance && k != best:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// distance returns the edits (a byte replaced, inserted, deleted, or two
// adjacent ones swapped) that make a into b: their optimal string alignment
// distance. The properties are short ASCII words, so a table of three rows
// is all it keeps. A library for it would be one more module in every
// CoreDNS build for a start-up message.
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1) // row i-2
	prev := make([]int, len(b)+1)  // row i-1
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
