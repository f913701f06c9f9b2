package directive

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"ttl", "ttl", 0},
		{"tll", "ttl", 1},  // swapped
		{"tl", "ttl", 1},   // missing
		{"ttll", "ttl", 1}, // extra
		{"ttk", "ttl", 1},  // wrong
		{"endpont", "endpoint", 1},
		{"credentails", "credentials", 1},
		{"", "ns", 2},
		{"ns", "", 2},
		{"glue", "ttl", 4},
	} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestUnknown(t *testing.T) {
	known := []string{"ttl", "ns", "mname", "rname", "endpoint", "credentials", "retry", "expire"}
	for _, tc := range []struct{ property, want string }{
		{"tll", `unknown property "tll": did you mean "ttl"?`},
		{"TTL", `unknown property "TTL": did you mean "ttl"?`},
		{"endpoints", `unknown property "endpoints": did you mean "endpoint"?`},
		{"credential", `unknown property "credential": did you mean "credentials"?`},
		{"rnam", `unknown property "rnam": did you mean "rname"?`},
		{"name", `unknown property "name"`}, // mname and rname, equally close
		{"zone", `unknown property "zone"`}, // nothing near
		{"n", `unknown property "n"`},       // ns is one edit away, but a word of one letter says nothing
		{"expiry", `unknown property "expiry": did you mean "expire"?`},
	} {
		c := caddy.NewTestController("dns", "etcdzone {\n"+tc.property+"\n}")
		c.Next()
		c.NextBlock()
		err := Unknown(c, c.Val(), known)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (!strings.Contains(tc.want, "did you mean") && strings.Contains(err.Error(), "did you mean")) {
			t.Errorf("Unknown(%q): %v, want %s", tc.property, err, tc.want)
		}
	}
}
