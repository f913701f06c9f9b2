package config

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

// Delegation is a subdomain the Corefile delegates to other name servers.
type Delegation struct {
	Name string   // the zone cut, lower case and fully qualified
	NS   []string // its name servers
	// Where is the Corefile's file and line, for start-up errors.
	Where string
}

// Glue is the address of a name server inside the zones, from the Corefile.
type Glue struct {
	Name  string       // the name server, lower case and fully qualified
	Addrs []netip.Addr // its addresses
	// Where is the Corefile's file and line, for start-up errors.
	Where string
}

// parseDelegate reads "delegate NAME NS...", a subdomain not among those
// delegated before.
func parseDelegate(c *caddy.Controller, args []string, before []Delegation) (Delegation, error) {
	names, err := parseNames(c, args)
	switch {
	case err != nil:
		return Delegation{}, err
	case len(names) < 2:
		return Delegation{}, c.Errf("delegate needs a subdomain and its name servers")
	case slices.ContainsFunc(before, func(d Delegation) bool { return d.Name == names[0] }):
		return Delegation{}, c.Errf("%q is delegated twice", names[0])
	}
	return Delegation{Name: names[0], NS: names[1:], Where: directive.Where(c)}, nil
}

// parseGlue reads "glue NAME ADDRESS...".
func parseGlue(c *caddy.Controller, args []string) (Glue, error) {
	if len(args) < 2 {
		return Glue{}, c.Errf("glue needs a name server and its addresses")
	}
	name, err := parseName(c, args[:1])
	if err != nil {
		return Glue{}, err
	}
	g := Glue{Name: name, Where: directive.Where(c)}
	for _, arg := range strings.Fields(strings.Join(args[1:], " ")) {
		a, err := netip.ParseAddr(arg)
		if err != nil || a.Zone() != "" || a.Is4In6() {
			return Glue{}, c.Errf("%q is not an IPv4 or IPv6 address", arg)
		}
		g.Addrs = append(g.Addrs, a)
	}
	return g, nil
}
