package globaladdr

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"

	"github.com/miekg/dns"
)

const pluginName = "globaladdr"

// maxTTL is the largest TTL RFC 2181 allows.
const maxTTL = 1<<31 - 1

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	g, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		g.Next = next
		return g
	})
	return nil
}

// placed is a parsed address or prefix with where the Corefile wrote it, for
// the checks that need the whole block.
type placed struct {
	prefix netip.Prefix
	token  string
	where  string
}

func (p placed) errorf(format string, args ...any) error {
	return fmt.Errorf("%s - Error during parsing: %q: %s", p.where, p.token, fmt.Sprintf(format, args...))
}

func place(c *caddy.Controller, prefix netip.Prefix) placed {
	return placed{prefix: prefix, token: c.Val(), where: fmt.Sprintf("%s:%d", c.File(), c.Line())}
}

// parse reads the globaladdr directive of one server block.
func parse(c *caddy.Controller) (*GlobalAddr, error) {
	p := &policy{ttl: -1}
	var (
		addrs    []placed // global addresses
		internal []netip.Prefix
		targets  []placed // map destinations
	)
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, c.Errf("%s is given twice in this server block", pluginName)
		}
		for c.NextArg() {
			a, err := parseAddr(c)
			if err != nil {
				return nil, err
			}
			addrs = append(addrs, place(c, netip.PrefixFrom(a, a.BitLen())))
		}
		for c.NextBlock() {
			var err error
			switch c.Val() {
			case "ttl":
				p.ttl, err = parseTTL(c)
			case "internal":
				internal, err = parseInternal(c, internal)
			case "map":
				var m mapping
				if m, err = parseMap(c); err == nil {
					p.maps = append(p.maps, m)
					targets = append(targets, place(c, m.to))
				}
			case "hide":
				p.hide, err = parseHide(c, p.hide)
			case "keep_registry":
				if c.NextArg() {
					err = c.ArgErr()
				}
				p.keepRegistry = true
			default:
				err = c.Errf("unknown property %q", c.Val())
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if len(addrs) == 0 {
		return nil, c.Errf("no global address given")
	}
	if internal == nil {
		for _, s := range defaultInternal {
			internal = append(internal, netip.MustParsePrefix(s))
		}
	}
	p.internal = internal
	sort.SliceStable(p.maps, func(i, j int) bool { return p.maps[i].from.Bits() > p.maps[j].from.Bits() })
	for _, a := range append(addrs, targets...) {
		if p.overlapsInternal(a.prefix) {
			return nil, a.errorf("global address is itself internal")
		}
	}
	g := &GlobalAddr{policy: p}
	g.addrs.Store(newGlobals(unique(addrs)))
	return g, nil
}

// parseAddr parses the current token as a global address.
func parseAddr(c *caddy.Controller) (netip.Addr, error) {
	a, err := netip.ParseAddr(c.Val())
	if err != nil || a.Zone() != "" || a.Is4In6() {
		return a, c.Errf("%q is not an IPv4 or IPv6 address", c.Val())
	}
	return a, nil
}

// parsePrefix parses the current token as a prefix; a plain address is a
// prefix of its full length.
func parsePrefix(c *caddy.Controller) (pr netip.Prefix, single bool, err error) {
	s := c.Val()
	if !strings.Contains(s, "/") {
		a, err := parseAddr(c)
		return netip.PrefixFrom(a, a.BitLen()), true, err
	}
	pr, err = netip.ParsePrefix(s)
	if err != nil || pr.Addr().Is4In6() {
		return pr, false, c.Errf("%q is not an address prefix", s)
	}
	return pr.Masked(), false, nil
}

func parseTTL(c *caddy.Controller) (int64, error) {
	if !c.NextArg() {
		return 0, c.ArgErr()
	}
	ttl, err := strconv.ParseInt(c.Val(), 10, 64)
	if err != nil || ttl < 0 || ttl > maxTTL {
		return 0, c.Errf("ttl %q is not a number of seconds from 0 to %d", c.Val(), maxTTL)
	}
	if c.NextArg() {
		return 0, c.ArgErr()
	}
	return ttl, nil
}

func parseInternal(c *caddy.Controller, internal []netip.Prefix) ([]netip.Prefix, error) {
	args := 0
	for ; c.NextArg(); args++ {
		pr, _, err := parsePrefix(c)
		if err != nil {
			return nil, err
		}
		internal = append(internal, pr)
	}
	if args == 0 {
		return nil, c.ArgErr()
	}
	return internal, nil
}

// parseMap reads "map FROM TO".
func parseMap(c *caddy.Controller) (mapping, error) {
	var m mapping
	if !c.NextArg() {
		return m, c.ArgErr()
	}
	from, _, err := parsePrefix(c)
	if err != nil {
		return m, err
	}
	if !c.NextArg() {
		return m, c.ArgErr()
	}
	to, single, err := parsePrefix(c)
	switch {
	case err != nil:
		return m, err
	case from.Addr().Is4() != to.Addr().Is4():
		return m, c.Errf("%q and %s are of different address families", c.Val(), from)
	case !single && to.Bits() != from.Bits():
		return m, c.Errf("%q is not of %s's length /%d", c.Val(), from, from.Bits())
	}
	m = mapping{from: from, to: to}
	if single {
		m.single = net.IP(to.Addr().AsSlice())
	}
	if c.NextArg() {
		return m, c.ArgErr()
	}
	return m, nil
}

func parseHide(c *caddy.Controller, hide []string) ([]string, error) {
	args := 0
	for ; c.NextArg(); args++ {
		name := strings.ToLower(dns.Fqdn(c.Val()))
		if _, ok := dns.IsDomainName(name); !ok {
			return nil, c.Errf("%q is not a domain name", c.Val())
		}
		hide = append(hide, name)
	}
	if args == 0 {
		return nil, c.ArgErr()
	}
	return hide, nil
}

// overlapsInternal reports whether any address of pr is internal.
func (p *policy) overlapsInternal(pr netip.Prefix) bool {
	for _, in := range p.internal {
		if in.Overlaps(pr) {
			return true
		}
	}
	for _, m := range p.maps {
		if m.from.Overlaps(pr) {
			return true
		}
	}
	return false
}

// unique returns the addresses of addrs, each once.
func unique(addrs []placed) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if !slices.Contains(out, a.prefix.Addr()) {
			out = append(out, a.prefix.Addr())
		}
	}
	return out
}
