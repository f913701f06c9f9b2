package etcdzone

import (
	"strings"

	"github.com/miekg/dns"
)

// zoneMap maps zone names, in lower case and fully qualified, to what each
// zone holds. It finds the deepest zone of a name by walking up the name's
// labels: as many lookups as the name has labels, however many zones it
// holds, and no allocation for a name in lower case (every query asks).
type zoneMap[T any] map[string]T

// newZoneSet returns the zoneMap of names.
func newZoneSet(names []string) zoneMap[bool] {
	m := make(zoneMap[bool], len(names))
	for _, name := range names {
		m[strings.ToLower(dns.Fqdn(name))] = true
	}
	return m
}

// byName returns the zoneMap of zones.
func byName(zones []*hosted) zoneMap[*hosted] {
	m := make(zoneMap[*hosted], len(zones))
	for _, z := range zones {
		m[strings.ToLower(z.name)] = z
	}
	return m
}

// deepest returns what the deepest of m's zones that holds name (name
// itself, or a name above it) holds, and whether there is one.
func (m zoneMap[T]) deepest(name string) (T, bool) {
	name = strings.ToLower(dns.Fqdn(name))
	for i, end := 0, name == "."; !end; i, end = dns.NextLabel(name, i) {
		if v, ok := m[name[i:]]; ok {
			return v, true
		}
	}
	v, ok := m["."]
	return v, ok
}

// holds reports whether name is one of m's zones or lies below one.
func (m zoneMap[T]) holds(name string) bool {
	_, ok := m.deepest(name)
	return ok
}
