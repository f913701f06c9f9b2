package update

import (
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// Updatable are the record types an UPDATE may write: those a SkyDNS value
// in etcd holds.
var Updatable = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeTXT}

// Rule lets the holder of a TSIG key change records of some names and types
// by RFC 2136 UPDATE.
type Rule struct {
	Key string // the TSIG key's name, lower case and fully qualified
	// Name is an owner name, "@" for the zone's apex, "*" for every name of
	// the zone, "*.NAME" for every name below NAME, or "_acme-challenge.*"
	// for the names of ACME challenges.
	Name  string
	Types []uint16
	// Lease makes the records written under the rule expire by themselves
	// (an ACME challenge's).
	Lease bool
	// Where is the Corefile's file and line, for start-up errors.
	Where string
}

// ChallengeRule returns the rule of `update KEY`: TXT records of ACME
// challenges, with a lease.
func ChallengeRule(key, where string) Rule {
	return Rule{Key: key, Name: dnsname.Challenge + "*", Types: []uint16{dns.TypeTXT}, Lease: true, Where: where}
}

// permits reports whether r lets key change name's records of type t in
// zone. A deletion of every type (ANY) needs a rule of every type (*).
func (r Rule) permits(key, zone, name string, t uint16) bool {
	if r.Key != key || !r.covers(zone, name) {
		return false
	}
	if t == dns.TypeANY {
		return !slices.ContainsFunc(Updatable, func(t uint16) bool { return !slices.Contains(r.Types, t) })
	}
	return slices.Contains(r.Types, t)
}

// covers reports whether r's name pattern covers name, in zone.
func (r Rule) covers(zone, name string) bool {
	switch {
	case r.Name == "@":
		return name == zone
	case r.Name == "*":
		return true
	case r.Name == dnsname.Challenge+"*":
		return strings.HasPrefix(name, dnsname.Challenge)
	case strings.HasPrefix(r.Name, "*."):
		return name != r.Name[2:] && dns.IsSubDomain(r.Name[2:], name)
	}
	return name == r.Name
}

// permitting returns the rule of rules that lets key change name's records
// of type t in zone, and whether there is one.
func permitting(rules []Rule, key, zone, name string, t uint16) (Rule, bool) {
	for _, r := range rules {
		if r.permits(key, zone, name, t) {
			return r, true
		}
	}
	return Rule{}, false
}
