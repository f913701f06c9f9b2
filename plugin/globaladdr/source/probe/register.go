package probe

import (
	"maps"
	"slices"

	"github.com/coredns/caddy"
)

// ParseFunc reads the arguments of a from line of a polled source (after
// its keyword) and returns its Probers: one per server, which vote when they
// are several. It reports a bad argument with c.Errf, naming the token.
type ParseFunc func(c *caddy.Controller, args []string) ([]Prober, error)

// polledKind is what Register registered for one keyword.
type polledKind struct {
	kind  Kind
	parse ParseFunc
}

// probers maps each polled source's keyword to its parser. It is written by
// init functions only.
var probers = map[string]polledKind{}

// Register makes "from KEYWORD ARGS..." a polled source of kind, whose
// probers parse makes. Call it from an init function, in the source's own
// file; a keyword registered twice panics.
func Register(keyword string, kind Kind, parse ParseFunc) {
	if _, dup := probers[keyword]; dup || keyword == "file" || keyword == "etcd" || keyword == "interface" {
		panic("globaladdr: source " + keyword + " registered twice")
	}
	probers[keyword] = polledKind{kind: kind, parse: parse}
}

// Lookup returns the kind and the parser of the polled source keyword; ok
// is false when no such source is registered.
func Lookup(keyword string) (kind Kind, parse ParseFunc, ok bool) {
	pk, ok := probers[keyword]
	return pk.kind, pk.parse, ok
}

// Keywords returns the keywords of the polled sources, sorted.
func Keywords() []string { return slices.Sorted(maps.Keys(probers)) }
