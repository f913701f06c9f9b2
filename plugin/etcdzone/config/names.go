package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"

	"github.com/miekg/dns"
)

// parseNames reads domain names, lower case and fully qualified. An
// argument may hold several, separated by spaces, as an environment
// variable expanded in the Corefile (ns {$NS}) gives them.
func parseNames(c *caddy.Controller, args []string) ([]string, error) {
	var names []string
	for _, arg := range args {
		for word := range strings.FieldsSeq(arg) {
			name := strings.ToLower(dns.Fqdn(word))
			if _, ok := dns.IsDomainName(name); !ok || name == "." {
				return nil, c.Errf("%q is not a domain name", word)
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// parseName reads one domain name.
func parseName(c *caddy.Controller, args []string) (string, error) {
	names, err := parseNames(c, args)
	if err != nil {
		return "", err
	}
	if len(names) != 1 {
		return "", c.ArgErr()
	}
	return names[0], nil
}

// parseSeconds reads a TTL or SOA timer: seconds ("3600") or a Go duration
// of whole seconds ("1h"), at least least and at most directive.MaxTTL seconds.
func parseSeconds(c *caddy.Controller, property string, args []string, least uint32) (uint32, error) {
	if len(args) != 1 {
		return 0, c.ArgErr()
	}
	s, err := strconv.ParseUint(args[0], 10, 32)
	if err != nil {
		d, derr := time.ParseDuration(args[0])
		if derr == nil && d%time.Second == 0 && d >= 0 {
			s, err = uint64(d/time.Second), nil
		}
	}
	if err != nil || s < uint64(least) || s > directive.MaxTTL {
		return 0, c.Errf("%s %q is not a number of seconds from %d to %d", property, args[0], least, directive.MaxTTL)
	}
	return uint32(s), nil
}
