package rrl

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"

	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

const pluginName = "rrl"

// The limits BIND 9 puts on its rate-limit options.
const (
	maxRate   = 1000
	maxWindow = 3600
	maxSlip   = 10
	// maxTableSize bounds max-table-size, so that the table's index (4 bytes
	// a slot, two slots an entry) stays within reason.
	maxTableSize = 10_000_000
)

// BIND 9's defaults.
const (
	defaultWindow       = 15
	defaultSlip         = 2
	defaultIPv4Length   = 24
	defaultIPv6Length   = 56
	defaultMaxTableSize = 20000
)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	r := newRRL(cfg)
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		r.Next = next
		return r
	})
	return nil
}

// rateOptions are the options that set a class's responses per second.
var rateOptions = map[string]class{
	"responses-per-second": classResponse,
	"nodata-per-second":    classNodata,
	"nxdomains-per-second": classNxdomain,
	"referrals-per-second": classReferral,
	"errors-per-second":    classError,
	"all-per-second":       classAll,
}

// parse reads the rrl directive of one server block.
func parse(c *caddy.Controller) (config, error) {
	cfg := config{
		window:       defaultWindow,
		slip:         defaultSlip,
		ipv4Length:   defaultIPv4Length,
		ipv6Length:   defaultIPv6Length,
		maxTableSize: defaultMaxTableSize,
	}
	given := map[class]bool{}
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return cfg, directive.Twice(c, pluginName)
		}
		if args := c.RemainingArgs(); len(args) > 0 {
			return cfg, c.Errf("%s takes no arguments, got %q", pluginName, args[0])
		}
		for c.NextBlock() {
			option, args := c.Val(), c.RemainingArgs()
			var err error
			switch option {
			case "window":
				cfg.window, err = parseNumber(c, option, args, 1, maxWindow)
			case "slip":
				cfg.slip, err = parseNumber(c, option, args, 0, maxSlip)
			case "ipv4-prefix-length":
				cfg.ipv4Length, err = parseNumber(c, option, args, 0, 32)
			case "ipv6-prefix-length":
				cfg.ipv6Length, err = parseNumber(c, option, args, 0, 128)
			case "max-table-size":
				cfg.maxTableSize, err = parseNumber(c, option, args, 1, maxTableSize)
			case "exempt-clients":
				cfg.exempt, err = parseExempt(c, args, cfg.exempt)
			case "log-only":
				if len(args) > 0 {
					err = c.ArgErr()
				}
				cfg.logOnly = true
			default:
				cl, ok := rateOptions[option]
				if !ok {
					return cfg, c.Errf("unknown option %q", option)
				}
				cfg.rates[cl], err = parseNumber(c, option, args, 0, maxRate)
				given[cl] = true
			}
			if err != nil {
				return cfg, err
			}
		}
	}
	// As in BIND, the rates of NODATA, NXDOMAIN, referrals and errors
	// default to responses-per-second.
	for _, cl := range []class{classNodata, classNxdomain, classReferral, classError} {
		if !given[cl] {
			cfg.rates[cl] = cfg.rates[classResponse]
		}
	}
	return cfg, nil
}

// parseNumber reads the single argument of option as a whole number from lo
// to hi.
func parseNumber(c *caddy.Controller, option string, args []string, lo, hi int) (int, error) {
	if len(args) != 1 {
		return 0, c.ArgErr()
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < lo || n > hi {
		return 0, c.Errf("%s %q is not a whole number from %d to %d", option, args[0], lo, hi)
	}
	return n, nil
}

// parseExempt reads "exempt-clients CIDR...": prefixes or single addresses.
func parseExempt(c *caddy.Controller, args []string, exempt []netip.Prefix) ([]netip.Prefix, error) {
	if len(args) == 0 {
		return nil, c.ArgErr()
	}
	for _, arg := range args {
		var (
			p   netip.Prefix
			err error
		)
		if strings.Contains(arg, "/") {
			p, err = netip.ParsePrefix(arg)
		} else {
			var a netip.Addr
			if a, err = netip.ParseAddr(arg); err == nil && a.Zone() == "" {
				p = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil || !p.IsValid() || p.Addr().Is4In6() {
			return nil, c.Errf("exempt-clients %q is not an address or prefix", arg)
		}
		exempt = append(exempt, p.Masked())
	}
	return exempt, nil
}
