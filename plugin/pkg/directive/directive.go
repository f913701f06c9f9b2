// Package directive reads the Corefile directives that this repository's
// plugins write alike.
package directive

import (
	"fmt"

	"github.com/coredns/caddy"
)

// Bare reads the directive name of one server block, which takes no
// arguments and no block and is given once, and returns the Corefile's file
// and line it is at ("Corefile:3"). Its errors name the file, the line and
// the token at fault.
func Bare(c *caddy.Controller, name string) (where string, err error) {
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return "", c.Errf("%s is given twice in this server block", name)
		}
		where = fmt.Sprintf("%s:%d", c.File(), c.Line())
		if args := c.RemainingArgs(); len(args) > 0 {
			return "", c.Errf("%s takes no arguments, got %q", name, args[0])
		}
		if c.NextBlock() {
			return "", c.Errf("%s takes no block, got %q", name, c.Val())
		}
	}
	return where, nil
}
