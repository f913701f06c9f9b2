package config

import (
	"slices"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/update"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"

	"github.com/miekg/dns"
)

// defaultUpdateLease is how long an ACME challenge lives when its client
// never deletes it: long enough for any CA's validation and its retries.
const defaultUpdateLease = 3 * time.Hour

// parseUpdateKeys reads "update KEY...": the TSIG keys that may add and
// delete ACME challenges.
func parseUpdateKeys(c *caddy.Controller, args []string) ([]update.Rule, error) {
	keys, err := parseNames(c, args)
	if err == nil && len(keys) == 0 {
		err = c.Errf("update needs the names of TSIG keys")
	}
	var rules []update.Rule
	for _, key := range keys {
		rules = append(rules, update.ChallengeRule(key, directive.Where(c)))
	}
	return rules, err
}

// parseUpdateAllow reads "update_allow KEY NAME TYPE...".
func parseUpdateAllow(c *caddy.Controller, args []string) (update.Rule, error) {
	if len(args) < 3 {
		return update.Rule{}, c.Errf("update_allow needs a TSIG key, a name and record types")
	}
	key, err := parseName(c, args[:1])
	if err != nil {
		return update.Rule{}, err
	}
	r := update.Rule{Key: key, Name: strings.ToLower(args[1]), Where: directive.Where(c)}
	if r.Name != "@" && r.Name != "*" {
		name := strings.TrimPrefix(r.Name, "*.")
		if strings.Contains(name, "*") {
			return update.Rule{}, c.Errf("%q: update_allow takes a name, @, * or *.NAME", args[1])
		}
		if _, err := parseName(c, []string{name}); err != nil {
			return update.Rule{}, err
		}
		r.Name = strings.TrimSuffix(r.Name, name) + dns.Fqdn(name)
	}
	for _, arg := range args[2:] {
		switch t, ok := dns.StringToType[strings.ToUpper(arg)]; {
		case arg == "*":
			r.Types = append(r.Types[:0], update.Updatable...)
		case ok && slices.Contains(update.Updatable, t):
			r.Types = append(r.Types, t)
		default:
			return update.Rule{}, c.Errf("%q: update_allow takes the types A, AAAA, CNAME, TXT or *", arg)
		}
	}
	return r, nil
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
