package zone

import (
	"cmp"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// node is one owner name of a version with its records, as the view shows
// them, ordered by type (and in the index's order within a type): a query
// for one type gets a slice of them, never a copy. When the view shows the
// name's records otherwise than the index holds them (rewritten, or some
// left out), the node holds the index's too, for the view to count what it
// did (see Version.Judged). A node is never changed once built, so versions
// share the nodes of the names a change left alone.
type node struct {
	name string
	// rrs are the records shown, then those judged, each by type; shown
	// is the number of the first.
	rrs   []dns.RR
	shown int
}

// newNode returns the node of shown, the records of one owner name as the
// view shows them, and of judged, those the index holds when the view
// shows them otherwise (none when it shows them as they are), all in lower
// case (as the index makes them).
func newNode(name string, shown, judged []dns.RR) *node {
	slices.SortStableFunc(shown, byType)
	slices.SortStableFunc(judged, byType)
	rrs := shown
	if len(judged) > 0 {
		rrs = slices.Concat(shown, judged)
	}
	return &node{name: name, rrs: slices.Clip(rrs), shown: len(shown)}
}

// byType orders records by their types.
func byType(a, b dns.RR) int { return cmp.Compare(a.Header().Rrtype, b.Header().Rrtype) }

// records returns the records n shows, by type.
func (n *node) records() []dns.RR { return n.rrs[:n.shown:n.shown] }

// judged returns the records the index holds at n's name, by type, when the
// view shows them otherwise; none when it shows them as they are.
func (n *node) judged() []dns.RR { return n.rrs[n.shown:] }

// typ returns n's records of type t, in a slice that appending to does not
// change n; nil when n has none (and for a nil node).
func (n *node) typ(t uint16) []dns.RR {
	if n == nil {
		return nil
	}
	return rrsOfType(n.records(), t)
}

// rrsOfType returns the records of type t in rrs, ordered by type, in a
// slice whose capacity ends with them.
func rrsOfType(rrs []dns.RR, t uint16) []dns.RR {
	i := 0
	for i < len(rrs) && rrs[i].Header().Rrtype < t {
		i++
	}
	j := i
	for j < len(rrs) && rrs[j].Header().Rrtype == t {
		j++
	}
	if i == j {
		return nil
	}
	return rrs[i:j:j]
}

// addresses returns n's A and AAAA records, in that order, in a slice of
// their own: glue and the additional section of MX and SRV answers.
func (n *node) addresses() []dns.RR {
	return slices.Concat(n.typ(dns.TypeA), n.typ(dns.TypeAAAA))
}

// find returns the node of nodes, in canonical order, named name; nil when
// none is.
func find(nodes []*node, name string) *node {
	i, ok := slices.BinarySearchFunc(nodes, name, compareNodeName)
	if !ok {
		return nil
	}
	return nodes[i]
}

// hasBelow reports whether a node of nodes, in canonical order, lies below
// name: the first after name does.
func hasBelow(nodes []*node, name string) bool {
	i, found := slices.BinarySearchFunc(nodes, name, compareNodeName)
	if found {
		i++
	}
	return i < len(nodes) && dnsname.In(nodes[i].name, name)
}

// compareNodeName compares n's name with name, in canonical order.
func compareNodeName(n *node, name string) int { return compareNames(n.name, name) }

// compareNodes orders nodes by their names, in DNSSEC's canonical order
// (RFC 4034, 6.1): the order of a transfer, and of the changes a version
// makes.
func compareNodes(a, b *node) int { return compareNames(a.name, b.name) }

// compareNames compares the names a and b, lower case and fully qualified,
// in canonical order: label by label from the right, each as a string of
// octets, a name before those below it.
func compareNames(a, b string) int {
	if strings.Contains(a, `\`) || strings.Contains(b, `\`) {
		return compareLabels(wireLabels(a), wireLabels(b))
	}
	a, b = strings.TrimSuffix(a, "."), strings.TrimSuffix(b, ".")
	for a != "" && b != "" {
		var la, lb string
		la, a = cutLastLabel(a)
		lb, b = cutLastLabel(b)
		if c := strings.Compare(la, lb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// cutLastLabel returns the rightmost label of name, a name without escapes
// or final dot, and the labels before it.
func cutLastLabel(name string) (label, rest string) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, ""
	}
	return name[i+1:], name[:i]
}

// wireLabels returns the labels of name, its escapes decoded (as on the
// wire) and its letters folded to lower case, from the left; none for a
// name that does not pack.
func wireLabels(name string) []string {
	buf := make([]byte, 256)
	end, err := dns.PackDomainName(name, buf, 0, nil, false)
	if err != nil {
		return nil
	}
	var labels []string
	for off := 0; off < end && buf[off] > 0; off += 1 + int(buf[off]) {
		label := buf[off+1 : off+1+int(buf[off])]
		for i, c := range label {
			if 'A' <= c && c <= 'Z' {
				label[i] = c + 'a' - 'A'
			}
		}
		labels = append(labels, string(label))
	}
	return labels
}

// compareLabels compares two names given as their labels, from the right.
func compareLabels(a, b []string) int {
	for len(a) > 0 && len(b) > 0 {
		if c := strings.Compare(a[len(a)-1], b[len(b)-1]); c != 0 {
			return c
		}
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	return cmp.Compare(len(a), len(b))
}
