package etcdzone

import (
	"slices"
	"strings"
	"time"

	"github.com/coredns/caddy"

	"github.com/miekg/dns"
)

// updatable are the record types an UPDATE may write: those a SkyDNS value
// in etcd holds.
var updatable = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeTXT}

// rule lets the holder of a TSIG key change records of some names and types
// by RFC 2136 UPDATE.
type rule struct {
	key string // the TSIG key's name, lower case and fully qualified
	// name is an owner name, "@" for the zone's apex, "*" for every name of
	// the zone, "*.NAME" for every name below NAME, or "_acme-challenge.*"
	// for the names of ACME challenges.
	name  string
	types []uint16
	// lease makes the records written under the rule expire by themselves
	// (an ACME challenge's).
	lease bool
	where string
}

// challengeRule returns the rule of `update KEY`: TXT records of ACME
// challenges, with a lease.
func challengeRule(key, where string) rule {
	return rule{key: key, name: challengeLabel + "*", types: []uint16{dns.TypeTXT}, lease: true, where: where}
}

// challengeLabel is the first label of an ACME DNS-01 challenge's name (RFC
// 8555, section 8.4).
const challengeLabel = "_acme-challenge."

// permits reports whether r lets key change name's records of type t in
// zone. A deletion of every type (ANY) needs a rule of every type (*).
func (r rule) permits(key, zone, name string, t uint16) bool {
	if r.key != key || !r.covers(zone, name) {
		return false
	}
	if t == dns.TypeANY {
		return !slices.ContainsFunc(updatable, func(t uint16) bool { return !slices.Contains(r.types, t) })
	}
	return slices.Contains(r.types, t)
}

// covers reports whether r's name pattern covers name, in zone.
func (r rule) covers(zone, name string) bool {
	switch {
	case r.name == "@":
		return name == zone
	case r.name == "*":
		return true
	case r.name == challengeLabel+"*":
		return strings.HasPrefix(name, challengeLabel)
	case strings.HasPrefix(r.name, "*."):
		return name != r.name[2:] && dns.IsSubDomain(r.name[2:], name)
	}
	return name == r.name
}

// permitting returns the rule of rules that lets key change name's records
// of type t in zone, and whether there is one.
func permitting(rules []rule, key, zone, name string, t uint16) (rule, bool) {
	for _, r := range rules {
		if r.permits(key, zone, name, t) {
			return r, true
		}
	}
	return rule{}, false
}

// defaultUpdateLease is how long an ACME challenge lives when its client
// never deletes it: long enough for any CA's validation and its retries.
const defaultUpdateLease = 3 * time.Hour

// parseUpdate reads "update KEY...": the TSIG keys that may add and delete
// ACME challenges.
func (x *EtcdZone) parseUpdate(c *caddy.Controller, args []string) error {
	keys, err := parseNames(c, args)
	if err == nil && len(keys) == 0 {
		err = c.Errf("update needs the names of TSIG keys")
	}
	for _, key := range keys {
		x.rules = append(x.rules, challengeRule(key, where(c)))
	}
	return err
}

// parseUpdateAllow reads "update_allow KEY NAME TYPE...".
func (x *EtcdZone) parseUpdateAllow(c *caddy.Controller, args []string) error {
	if len(args) < 3 {
		return c.Errf("update_allow needs a TSIG key, a name and record types")
	}
	key, err := parseName(c, args[:1])
	if err != nil {
		return err
	}
	r := rule{key: key, name: strings.ToLower(args[1]), where: where(c)}
	if r.name != "@" && r.name != "*" {
		name := strings.TrimPrefix(r.name, "*.")
		if strings.Contains(name, "*") {
			return c.Errf("%q: update_allow takes a name, @, * or *.NAME", args[1])
		}
		if _, err := parseName(c, []string{name}); err != nil {
			return err
		}
		r.name = strings.TrimSuffix(r.name, name) + dns.Fqdn(name)
	}
	for _, arg := range args[2:] {
		switch t, ok := dns.StringToType[strings.ToUpper(arg)]; {
		case arg == "*":
			r.types = append(r.types[:0], updatable...)
		case ok && slices.Contains(updatable, t):
			r.types = append(r.types, t)
		default:
			return c.Errf("%q: update_allow takes the types A, AAAA, CNAME, TXT or *", arg)
		}
	}
	x.rules = append(x.rules, r)
	return nil
}

// parseLease reads update_lease: a duration of whole seconds, at least 10 s
// (etcd's leases are no shorter).
func parseLease(c *caddy.Controller, args []string) (time.Duration, error) {
	if len(args) != 1 {
		return 0, c.ArgErr()
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < 10*time.Second || d%time.Second != 0 {
		return 0, c.Errf("update_lease %q is not a duration of whole seconds, at least 10s", args[0])
	}
	return d, nil
}
