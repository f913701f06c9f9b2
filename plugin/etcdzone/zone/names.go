package zone

import (
	"maps"
	"strings"

	"github.com/miekg/dns"
)

// names holds what a query looks up in a version, by lower-case name: each
// node, and each name that has names below it but no node (an empty
// non-terminal, held as nil). Every name between a node's and the zone's
// is there. A query takes one lookup of its name, or a few more on the way
// to its closest encloser (RFC 4592), and no search of an ordered tree.
type names struct {
	byName map[string]*node
	// wildcards holds the nodes of the wildcards (*.P), nil for one that
	// is an empty non-terminal, by the names they stand below (P).
	wildcards map[string]*node
}

// indexNames returns the names of nodes, all at or below origin, with
// every name between one of them and origin.
func indexNames(origin string, nodes []*node) names {
	ns := names{byName: make(map[string]*node, len(nodes)+len(nodes)/4), wildcards: map[string]*node{}}
	for _, n := range nodes {
		ns.set(n.name, n)
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
	next := names{byName: maps.Clone(ns.byName), wildcards: maps.Clone(ns.wildcards)}
	for name := range changed {
		if n := find(nodes, name); n != nil {
			next.set(name, n)
			next.markAbove(name, origin)
			continue
		}
		// The name lost its node. It, and each name above it that held
		// nothing else, goes; the first that still has names below it
		// stays (an empty non-terminal, if it has no node).
		if _, ok := next.byName[name]; !ok {
			continue
		}
		for {
			if hasBelow(nodes, name) {
				next.set(name, nil)
				break
			}
			next.delete(name)
			name = parent(name)
			if n, ok := next.byName[name]; !ok || n != nil {
				break
			}
		}
	}
	return next
}

// markAbove makes each name above name, up to origin, exist: it stops at
// one that does, whose own names above do too.
func (ns *names) markAbove(name, origin string) {
	for name != origin && name != "" {
		name = parent(name)
		if _, ok := ns.byName[name]; ok {
			return
		}
		ns.set(name, nil)
	}
}

// set makes n the node of name (nil: an empty non-terminal), and of its
// wildcard, if name is one.
func (ns *names) set(name string, n *node) {
	ns.byName[name] = n
	if p, ok := strings.CutPrefix(name, "*."); ok {
		ns.wildcards[p] = n
	}
}

// delete removes name.
func (ns *names) delete(name string) {
	delete(ns.byName, name)
	if p, ok := strings.CutPrefix(name, "*."); ok {
		delete(ns.wildcards, p)
	}
}

// parent returns the name one label shorter than name; "" for a name of
// one label.
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

// plain returns name, lower case, as the index holds names: an etcd key's
// labels, which escape nothing. A query's name escapes the characters that
// are special in a zone file (a\@b, \032); plain writes them as they are,
// all but a dot or a backslash inside a label, which no key's label holds.
func plain(name string) string {
	if !strings.Contains(name, `\`) {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '\\' || i+1 == len(name) {
			b.WriteByte(c)
			continue
		}
		n := 1 // the escape's length after the backslash
		if i+3 < len(name) && isDigit(name[i+1]) && isDigit(name[i+2]) && isDigit(name[i+3]) {
			c, n = byte((int(name[i+1]-'0')*100+int(name[i+2]-'0')*10+int(name[i+3]-'0'))&0xff), 3
		} else {
			c = name[i+1]
		}
		switch {
		case c == '.' || c == '\\':
			b.WriteString(name[i : i+1+n])
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
		i += n
	}
	return b.String()
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
