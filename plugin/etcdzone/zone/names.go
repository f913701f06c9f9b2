package zone

import (
	"strings"

	"github.com/miekg/dns"
)

// names holds what a query looks up in a version, by lower-case name: each
// node, and each name that has names below it (an empty non-terminal, when
// it has no node). A query takes one lookup of its name, or a few more on
// the way to its closest encloser (RFC 4592), and no search of an ordered
// tree.
type names struct {
	byName map[string]entry
	// wildcards holds the entries of the wildcards (*.P) by the names
	// they stand below (P).
	wildcards map[string]entry
}

// entry is what names holds of one name.
type entry struct {
	// node holds the name's records; nil for an empty non-terminal.
	node *node
	// below says that names exist below this one.
	below bool
}

// indexNames returns the names of nodes, all at or below origin, with
// every name between one of them and origin.
func indexNames(origin string, nodes []*node) names {
	byName := make(map[string]entry, len(nodes)+len(nodes)/4)
	for _, n := range nodes {
		byName[n.name] = entry{node: n}
	}
	for _, n := range nodes {
		name := n.name
		for name != origin && name != "" {
			name = parent(name)
			e := byName[name]
			if e.below {
				break // and so are the names above it
			}
			e.below = true
			byName[name] = e
		}
	}
	var wildcards map[string]entry
	for name, e := range byName {
		if strings.HasPrefix(name, "*.") {
			if wildcards == nil {
				wildcards = map[string]entry{}
			}
			wildcards[name[2:]] = e
		}
	}
	return names{byName: byName, wildcards: wildcards}
}

// parent returns the name one label shorter than name; "" for the root.
func parent(name string) string {
	off, end := dns.NextLabel(name, 0)
	if end {
		return ""
	}
	return name[off:]
}

// exists reports whether name exists in ns: it has records, or names below
// it.
func (ns names) exists(name string) bool {
	_, ok := ns.byName[name]
	return ok
}

// closestEncloser returns the longest name that exists in ns of those that
// name, below origin and not in ns, lies below: origin at most.
func (ns names) closestEncloser(name, origin string) string {
	for name != origin && name != "" {
		name = parent(name)
		if ns.exists(name) {
			return name
		}
	}
	return origin
}

// under reports whether name is zone or lies below it; both lower case and
// fully qualified. It is dns.IsSubDomain for the names of one zone, without
// the allocation.
func under(name, zone string) bool {
	if !strings.HasSuffix(name, zone) {
		return false
	}
	i := len(name) - len(zone) - 1 // the dot before zone, if any
	if i < 0 || zone == "." {
		return true
	}
	if name[i] != '.' {
		return false
	}
	escapes := 0
	for j := i - 1; j >= 0 && name[j] == '\\'; j-- {
		escapes++
	}
	return escapes%2 == 0
}
