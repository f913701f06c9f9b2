package zone

import (
	"maps"
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
	// they stand below (P); wildcardsOwned says that they are these
	// names' own, not yet shared with a version (see update).
	wildcards      map[string]entry
	wildcardsOwned bool
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
	ns := names{byName: make(map[string]entry, len(nodes)+len(nodes)/4), wildcardsOwned: true}
	for _, n := range nodes {
		ns.set(n.name, entry{node: n})
	}
	for _, n := range nodes {
		ns.markAbove(n.name, origin)
	}
	return ns
}

// update returns ns, the names of a version before, with the names changed
// changes, whose nodes are now those of nodes (none for a name no longer
// there): each changed name, and those above it that it made or stops
// making exist. ns is left as it is, for the version that has it.
func (ns names) update(origin string, nodes []*node, changed map[string]bool) names {
	next := names{byName: maps.Clone(ns.byName), wildcards: ns.wildcards}
	for name := range changed {
		if n := find(nodes, name); n != nil {
			next.set(name, entry{node: n, below: next.byName[name].below})
			next.markAbove(name, origin)
			continue
		}
		// The name, and each name above it that held nothing else,
		// loses what it no longer has.
		for {
			e, ok := next.byName[name]
			if !ok {
				break
			}
			n, below := find(nodes, name), hasBelow(nodes, name)
			if n == nil && !below {
				next.delete(name)
				name = parent(name)
				continue
			}
			if e.node != n || e.below != below {
				next.set(name, entry{node: n, below: below})
			}
			break
		}
	}
	return next
}

// markAbove notes that names lie below each name above name, up to origin.
func (ns *names) markAbove(name, origin string) {
	for name != origin && name != "" {
		name = parent(name)
		e := ns.byName[name]
		if e.below {
			return // and so are the names above it
		}
		e.below = true
		ns.set(name, e)
	}
}

// set makes e the entry of name, and of its wildcard, if name is one. The
// wildcards are copied before the first change: the version before has
// them.
func (ns *names) set(name string, e entry) {
	ns.byName[name] = e
	if p, ok := strings.CutPrefix(name, "*."); ok {
		ns.ownWildcards()
		ns.wildcards[p] = e
	}
}

// delete removes name.
func (ns *names) delete(name string) {
	delete(ns.byName, name)
	if p, ok := strings.CutPrefix(name, "*."); ok {
		ns.ownWildcards()
		delete(ns.wildcards, p)
	}
}

// ownWildcards gives ns a copy of its wildcards, once.
func (ns *names) ownWildcards() {
	if !ns.wildcardsOwned || ns.wildcards == nil {
		ns.wildcards = maps.Clone(ns.wildcards)
		if ns.wildcards == nil {
			ns.wildcards = map[string]entry{}
		}
		ns.wildcardsOwned = true
	}
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
