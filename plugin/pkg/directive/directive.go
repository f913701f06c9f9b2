// Package directive reads the Corefile directives that this repository's
// plugins write alike.
package directive

import (
	"fmt"
	"path/filepath"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// Bare reads the directive name of one server block, which takes no
// arguments and no block and is given once, and returns the Corefile's file
// and line it is at ("Corefile:3"). Its errors name the file, the line and
// the token at fault.
func Bare(c *caddy.Controller, name string) (where string, err error) {
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return "", Twice(c, name)
		}
		where = Where(c)
		if args := c.RemainingArgs(); len(args) > 0 {
			return "", c.Errf("%s takes no arguments, got %q", name, args[0])
		}
		if c.NextBlock() {
			return "", c.Errf("%s takes no block, got %q", name, c.Val())
		}
	}
	return where, nil
}

// Twice is the error for the directive name given a second time in one
// server block, at the token c is at.
func Twice(c *caddy.Controller, name string) error {
	return c.Errf("%s is given twice in this server block", name)
}

// Where returns the Corefile's file and line of the token c is at
// ("Corefile:3"), as errors that are not the parser's name them.
func Where(c *caddy.Controller) string { return fmt.Sprintf("%s:%d", c.File(), c.Line()) }

// MaxTTL is the largest TTL, and SOA timer, a directive takes: RFC 2181's.
const MaxTTL = 1<<31 - 1

// Rooted returns path resolved against the server block's root directive,
// as CoreDNS's file and etcd plugins resolve their files: a relative path
// lies in the root, when the block has one.
func Rooted(c *caddy.Controller, path string) string {
	if root := dnsserver.GetConfig(c).Root; root != "" && !filepath.IsAbs(path) {
		return filepath.Join(root, path)
	}
	return path
}
