//go:build linux

package main

import "fmt"

// rrlRate is the rrl path's rate: far above what one name gets from
// dnsperf's few hundred names, so that nothing is limited and the
// comparison measures what accounting for each reply costs.
const rrlRate = 1000

// rrlPath returns the path that measures rrl: an external view behind
// cache, as in corefile-examples, without and with rrl.
func rrlPath() *path {
	return &path{name: "rrl", cache: true, backend: "file", rrl: true}
}

// rewrites reports whether b has globaladdr: every "with" block, and both
// blocks of the rrl path.
func (b *block) rewrites() bool { return b.variant == with || b.path.rrl }

// rrlDirective returns the rrl directive of b: on the rrl path's "with"
// block only.
func (b *block) rrlDirective() string {
	if !b.path.rrl || b.variant != with {
		return ""
	}
	return fmt.Sprintf("\trrl {\n\t\tresponses-per-second %d\n\t}\n", rrlRate)
}
