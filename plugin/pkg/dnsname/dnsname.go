// Package dnsname answers the questions about domain names that this
// repository's plugins ask of every query and every record: whether a name
// lies in a zone, which of a set of zones is a name's deepest, and whether
// a name is an ACME challenge's. Names are fully qualified and in
// presentation format; none of it allocates for a name in lower case.
package dnsname

import (
	"strings"

	"github.com/miekg/dns"
)

// In reports whether name is zone or lies below it, ignoring case. Both are
// fully qualified; a dot escaped in a label (a\.b) is no label's end. It is
// dns.IsSubDomain without the allocation.
func In(name, zone string) bool {
	if zone == "." {
		return true
	}
	n := len(name) - len(zone)
	if n < 0 || !strings.EqualFold(name[n:], zone) {
		return false
	}
	if n == 0 {
		return true
	}
	if name[n-1] != '.' {
		return false
	}
	escapes := 0
	for i := n - 2; i >= 0 && name[i] == '\\'; i-- {
		escapes++
	}
	return escapes%2 == 0
}

// Zones maps zone names, in lower case and fully qualified, to what each
// zone holds. It finds the deepest zone of a name by walking up the name's
// labels: as many lookups as the name has labels, however many zones it
// holds.
type Zones[T any] map[string]T

// Set returns the Zones of names, each holding true.
func Set(names []string) Zones[bool] {
	m := make(Zones[bool], len(names))
	for _, name := range names {
		m[strings.ToLower(dns.Fqdn(name))] = true
	}
	return m
}

// Deepest returns the deepest of m's zones that holds name (name itself, or
// a name above it), what it holds, and whether there is one.
func (m Zones[T]) Deepest(name string) (zone string, v T, ok bool) {
	name = strings.ToLower(dns.Fqdn(name))
	for i, end := 0, name == "."; !end; i, end = dns.NextLabel(name, i) {
		if v, ok := m[name[i:]]; ok {
			return name[i:], v, true
		}
	}
	v, ok = m["."]
	return ".", v, ok
}

// Holds reports whether name is one of m's zones or lies below one.
func (m Zones[T]) Holds(name string) bool {
	_, _, ok := m.Deepest(name)
	return ok
}

// Challenge is the first label of an ACME DNS-01 challenge's name (RFC
// 8555, 8.4), with its dot.
const Challenge = "_acme-challenge."

// IsChallenge reports whether name is an ACME challenge's name.
func IsChallenge(name string) bool {
	return len(name) > len(Challenge) && strings.EqualFold(name[:len(Challenge)], Challenge)
}
