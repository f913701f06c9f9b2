package globaladdr

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"

	"github.com/miekg/dns"
)

const pluginName = "globaladdr"

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
	c.OnStartup(func() error { return g.start(dnsserver.GetConfig(c)) })
	c.OnShutdown(g.stop)
	return nil
}

// placed is a parsed address or prefix with where the Corefile wrote it,
// for the checks that need the whole block.
type placed struct {
	prefix netip.Prefix
	token  string
	where  string
}

func (p placed) errorf(format string, args ...any) error {
	return errorAt(p.where, p.token, format, args...)
}

// errorAt returns the error of a check that needs the whole block, about
// token, which the Corefile wrote at where, as caddy's parse errors read.
func errorAt(where, token, format string, args ...any) error {
	return fmt.Errorf("%s - Error during parsing: %q: %s", where, token, fmt.Sprintf(format, args...))
}

func place(c *caddy.Controller, token string, prefix netip.Prefix) placed {
	return placed{prefix: prefix, token: token, where: directive.Where(c)}
}

// parse reads the globaladdr directive of one server block.
func parse(c *caddy.Controller) (*GlobalAddr, error) {
	d := &directiveRead{opts: outside.Options{TTL: -1}}
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, directive.Twice(c, pluginName)
		}
		d.where = directive.Where(c)
		for _, arg := range c.RemainingArgs() {
			a, err := parseAddr(c, arg)
			if err != nil {
				return nil, err
			}
			d.addrs = append(d.addrs, place(c, arg, netip.PrefixFrom(a, a.BitLen())))
		}
		for c.NextBlock() {
			if err := d.property(c, c.Val(), c.RemainingArgs()); err != nil {
				return nil, err
			}
		}
	}
	return d.handler(c)
}

// directiveRead is what parse read of the directive, before it makes the
// handler of it.
type directiveRead struct {
	opts     outside.Options
	addrs    []placed // global addresses
	targets  []placed // map destinations
	sources  source.Config
	unmarked error  // see GlobalAddr.unmarked
	tunnel   tunnel // see GlobalAddr.tunnel
	where    string // see GlobalAddr.where
}

// properties are the properties directiveRead.property reads but the
// sources', for a "did you mean".
var properties = []string{"ttl", "internal", "map", "hide", "expose", "keep_registry", "tunnel"}

// property reads one property of the directive's block, with its
// arguments.
func (d *directiveRead) property(c *caddy.Controller, property string, args []string) error {
	var err error
	switch property {
	case "ttl":
		d.opts.TTL, err = parseTTL(c, args)
	case "internal":
		d.opts.Internal, err = parsePrefixes(c, args, d.opts.Internal)
	case "map":
		var m outside.Map
		if m, err = parseMap(c, args, &d.sources); err == nil {
			d.opts.Maps = append(d.opts.Maps, m)
			if m.Learned == nil {
				d.targets = append(d.targets, place(c, args[1], m.To))
			}
		}
	case "hide":
		d.opts.Hide, err = parseHide(c, args, d.opts.Hide)
	case "expose":
		if d.opts.OnlyMarked, err = parseExpose(c, args); d.opts.OnlyMarked {
			d.unmarked = c.Errf("expose marked: no backend of this server block marks its names (etcdzone, the etcd plugin): " +
				"every name would be NXDOMAIN; put the view in front of etcdzone or the etcd plugin, or expose unmarked")
		}
	case "tunnel":
		if d.tunnel.host != "" {
			return c.Errf("tunnel given twice: the view has one tunnel")
		}
		if d.tunnel, err = parseTunnel(c, args); err == nil {
			d.opts.Tunnel, d.opts.TunnelMarked = d.tunnel.host, d.tunnel.marked
		}
	case "keep_registry":
		if len(args) > 0 {
			err = argErr(c, "keep_registry takes no argument")
		}
		d.opts.KeepRegistry = true
	default:
		switch {
		case !source.IsProperty(property):
			err = directive.Unknown(c, property, append(source.Properties(), properties...))
		case (property == "from" || property == "uplink") && len(d.addrs) > 0:
			err = c.Errf("%q can't be mixed with ADDRESS arguments", property)
		default:
			err = d.sources.Parse(c, property, args)
		}
	}
	return err
}

// handler makes the handler of what was read, after checking it as a whole.
func (d *directiveRead) handler(c *caddy.Controller) (*GlobalAddr, error) {
	if len(d.addrs) == 0 && d.sources.Empty() && len(d.opts.Maps) == 0 && d.opts.Tunnel == "" {
		return nil, c.Errf("no global address given: give ADDRESS arguments, a from source, a map or a tunnel")
	}
	p := outside.New(d.opts)
	set, err := d.sources.New(p.IsInternal)
	if err != nil {
		return nil, err
	}
	for _, a := range append(d.addrs, d.targets...) {
		if p.OverlapsInternal(a.prefix) {
			return nil, a.errorf("global address is itself internal")
		}
	}
	g := &GlobalAddr{policy: p, sources: set, unmarked: d.unmarked, tunnel: d.tunnel, where: d.where}
	if d.sources.Empty() {
		g.use(p.Globals(unique(d.addrs)), 0)
	} else {
		g.use(p.NoGlobals(), 0)
	}
	return g, nil
}

// argErr is the error for a property given the wrong number of arguments:
// what names the property and what it takes, and the error names the last
// token read.
func argErr(c *caddy.Controller, what string) error {
	return c.Errf("%s, after %q", what, c.Val())
}

// parseAddr parses s as a global address.
func parseAddr(c *caddy.Controller, s string) (netip.Addr, error) {
	a, ok := probe.ParseAddr(s)
	if !ok {
		return a, c.Errf("%q is not an IPv4 or IPv6 address", s)
	}
	return a, nil
}

// parsePrefix parses s as a prefix; a plain address is a prefix of its full
// length (single).
func parsePrefix(c *caddy.Controller, s string) (pr netip.Prefix, single bool, err error) {
	if !strings.Contains(s, "/") {
		a, err := parseAddr(c, s)
		return netip.PrefixFrom(a, a.BitLen()), true, err
	}
	pr, err = netip.ParsePrefix(s)
	if err != nil || pr.Addr().Is4In6() {
		return pr, false, c.Errf("%q is not an address prefix", s)
	}
	return pr.Masked(), false, nil
}

// parseTTL reads "ttl SECONDS".
func parseTTL(c *caddy.Controller, args []string) (int64, error) {
	if len(args) != 1 {
		return 0, argErr(c, "ttl needs one SECONDS")
	}
	ttl, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || ttl < 0 || ttl > directive.MaxTTL {
		return 0, c.Errf("ttl %q is not a number of seconds from 0 to %d", args[0], directive.MaxTTL)
	}
	return ttl, nil
}

// parsePrefixes reads "internal CIDR...".
func parsePrefixes(c *caddy.Controller, args []string, prefixes []netip.Prefix) ([]netip.Prefix, error) {
	if len(args) == 0 {
		return nil, argErr(c, "internal needs at least one CIDR")
	}
	for _, arg := range args {
		pr, _, err := parsePrefix(c, arg)
		if err != nil {
			return nil, err
		}
		prefixes = append(prefixes, pr)
	}
	return prefixes, nil
}

// parseMap reads "map FROM TO" and "map FROM from SOURCE ARG", whose
// source goes to sources.
func parseMap(c *caddy.Controller, args []string, sources *source.Config) (outside.Map, error) {
	if len(args) < 2 || args[1] != "from" && len(args) != 2 {
		return outside.Map{}, argErr(c, "map needs FROM and TO")
	}
	from, _, err := parsePrefix(c, args[0])
	if err != nil {
		return outside.Map{}, err
	}
	if args[1] == "from" {
		learned, err := sources.ParseMapFrom(c, from, args[2:])
		return outside.Map{From: from, Learned: learned}, err
	}
	to, single, err := parsePrefix(c, args[1])
	switch {
	case err != nil:
		return outside.Map{}, err
	case from.Addr().Is4() != to.Addr().Is4():
		return outside.Map{}, c.Errf("%q and %s are of different address families", args[1], from)
	case !single && to.Bits() != from.Bits():
		return outside.Map{}, c.Errf("%q is not of %s's length /%d", args[1], from, from.Bits())
	}
	return outside.Map{From: from, To: to}, nil
}

// parseExpose reads "expose marked|unmarked": whether the view shows only
// the names marked exposed (horizon.Mark).
func parseExpose(c *caddy.Controller, args []string) (onlyMarked bool, err error) {
	if len(args) != 1 || (args[0] != "marked" && args[0] != "unmarked") {
		return false, argErr(c, "expose needs marked or unmarked")
	}
	return args[0] == "marked", nil
}

// parseHide reads "hide NAME...".
func parseHide(c *caddy.Controller, args []string, hide []string) ([]string, error) {
	if len(args) == 0 {
		return nil, argErr(c, "hide needs at least one NAME")
	}
	for _, arg := range args {
		name := strings.ToLower(dns.Fqdn(arg))
		if _, ok := dns.IsDomainName(name); !ok {
			return nil, c.Errf("%q is not a domain name", arg)
		}
		hide = append(hide, name)
	}
	return hide, nil
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
