// Package config reads the etcdzone directive of one server block into a
// plain value: the zones, what the Corefile adds to them (the apex's SOA
// and NS set, delegations, glue, DS records), fallthrough, the UPDATE
// rules, signing, the journal's bounds, the serial's key and the etcd
// connection, each with its place in the Corefile for the errors found at
// start-up. It checks each value as the Corefile gives it; what needs the
// server block (its etcd plugin, its zones) is checked when it starts.
package config

import (
	"slices"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/update"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
)

// Config is what the Corefile says of one block's etcdzone.
type Config struct {
	// Zones are the zones the Corefile names, lower case and fully
	// qualified; none means the etcd plugin's.
	Zones []string
	// Apex is the zones' SOA and NS set.
	Apex zone.Apex
	// Delegations are the subdomains delegated to other name servers, and
	// Glue the addresses of name servers inside the zones.
	Delegations []Delegation
	Glue        []Glue
	// Fall says which names the zones lack go to the next plugin; none
	// without fallthrough. FallWhere is the Corefile's file and line of
	// fallthrough.
	Fall      fall.F
	FallWhere string
	// Rules say who may change what by UPDATE; none: UPDATEs are refused.
	Rules []update.Rule
	// UpdateLease is how long a record written under a rule with a lease
	// lives unless deleted before.
	UpdateLease time.Duration
	// JournalRecords and JournalBytes bound each zone's journal.
	JournalRecords, JournalBytes int
	// SerialKey is where the zones' stamps are kept in etcd (serial_key),
	// "" for the default; SerialKeyWhere is its place in the Corefile.
	SerialKey, SerialKeyWhere string
	// DNSSEC says how to sign the zones; no keys: unsigned.
	DNSSEC DNSSEC
	// Conn is the etcd connection the Corefile gives the directive; when
	// it gives none, the etcd plugin's endpoints and credentials.
	Conn etcdclient.Config
	// Where is the Corefile's file and line of the directive.
	Where string
	// Block is the server block's keys as the Corefile gives them, which
	// the log names beside each zone: two blocks may serve one zone.
	Block string
}

// Parse reads the etcdzone directive of one server block.
func Parse(c *caddy.Controller) (*Config, error) {
	x := &Config{Apex: zone.Apex{
		TTL:     3600,
		Refresh: 3600,
		Retry:   600,
		Expire:  1209600,
		Minimum: 300,
	}, UpdateLease: defaultUpdateLease, JournalRecords: defaultJournalRecords, JournalBytes: defaultJournalBytes}
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, directive.Twice(c, c.Val())
		}
		x.Where = directive.Where(c)
		x.Block = strings.Join(c.ServerBlockKeys, " ")
		args, err := parseNames(c, c.RemainingArgs())
		if err != nil {
			return nil, err
		}
		x.Zones = args
		for c.NextBlock() {
			if err := x.property(c, c.Val(), c.RemainingArgs()); err != nil {
				return nil, err
			}
		}
	}
	return x, nil
}

// properties are those property reads itself, for a "did you mean"; the
// DNSSEC's and the connection's are beside their parsers.
var properties = []string{"ns", "mname", "rname", "ttl", "refresh", "retry", "expire", "minimum",
	"delegate", "glue", "update", "update_allow", "update_lease", "fallthrough", "journal", "serial_key"}

// property reads one property of the directive's block.
func (x *Config) property(c *caddy.Controller, property string, args []string) error {
	if etcdclient.IsProperty(property) {
		return x.Conn.Parse(c, property, args)
	}
	var err error
	switch property {
	case "ns":
		var names []string
		if names, err = parseNames(c, args); err == nil && len(names) == 0 {
			err = c.ArgErr()
		}
		x.Apex.NS = append(x.Apex.NS, names...)
	case "mname":
		x.Apex.MName, err = parseName(c, args)
	case "rname":
		x.Apex.RName, err = parseName(c, args)
	case "ttl":
		x.Apex.TTL, err = parseSeconds(c, property, args, 0)
	case "refresh":
		x.Apex.Refresh, err = parseSeconds(c, property, args, 1)
	case "retry":
		x.Apex.Retry, err = parseSeconds(c, property, args, 1)
	case "expire":
		x.Apex.Expire, err = parseSeconds(c, property, args, 1)
	case "minimum":
		x.Apex.Minimum, err = parseSeconds(c, property, args, 0)
	case "delegate":
		var d Delegation
		if d, err = parseDelegate(c, args, x.Delegations); err == nil {
			x.Delegations = append(x.Delegations, d)
		}
	case "glue":
		var g Glue
		if g, err = parseGlue(c, args); err == nil {
			x.Glue = append(x.Glue, g)
		}
	case "update":
		var rules []update.Rule
		rules, err = parseUpdateKeys(c, args)
		x.Rules = append(x.Rules, rules...)
	case "update_allow":
		var r update.Rule
		if r, err = parseUpdateAllow(c, args); err == nil {
			x.Rules = append(x.Rules, r)
		}
	case "update_lease":
		x.UpdateLease, err = parseLease(c, args)
	case "fallthrough":
		err = parseFallthrough(c, args, &x.Fall)
		x.FallWhere = directive.Where(c)
	case "journal":
		x.JournalRecords, x.JournalBytes, err = parseJournal(c, args)
	case "serial_key":
		x.SerialKey, err = parseKey(c, args)
		x.SerialKeyWhere = directive.Where(c)
	default:
		var ok bool
		if ok, err = x.DNSSEC.parse(c, property, args); !ok {
			err = directive.Unknown(c, property, slices.Concat(properties, dnssecProperties, etcdclient.Properties()))
		}
	}
	return err
}

// NameServers returns the names of the name servers the Corefile names, in
// ns and in the delegations, each once, sorted.
func (x *Config) NameServers() []string {
	names := slices.Clone(x.Apex.NS)
	for _, d := range x.Delegations {
		names = append(names, d.NS...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Glued reports whether the Corefile gives glue for name.
func (x *Config) Glued(name string) bool {
	return slices.ContainsFunc(x.Glue, func(g Glue) bool { return g.Name == name })
}
