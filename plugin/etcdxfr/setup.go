package etcdxfr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"

	"github.com/miekg/dns"
)

const pluginName = "etcdxfr"

// maxTTL is the largest TTL or SOA timer RFC 2181 allows.
const maxTTL = 1<<31 - 1

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	x, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		x.Next = next
		return x
	})
	c.OnStartup(func() error { return x.start(dnsserver.GetConfig(c)) })
	c.OnShutdown(x.shutdown)
	return nil
}

// parse reads the etcdxfr directive of one server block.
func parse(c *caddy.Controller) (*EtcdXfr, error) {
	x := &EtcdXfr{apex: apex{
		ttl:     3600,
		refresh: 3600,
		retry:   600,
		expire:  1209600,
		minimum: 300,
	}}
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, c.Errf("%s is given twice in this server block", pluginName)
		}
		x.where = fmt.Sprintf("%s:%d", c.File(), c.Line())
		x.Zones = plugin.OriginsFromArgsOrServerBlock(c.RemainingArgs(), c.ServerBlockKeys)
		for c.NextBlock() {
			property, args := c.Val(), c.RemainingArgs()
			var err error
			switch property {
			case "ns":
				x.apex.ns, err = parseNames(c, args, x.apex.ns)
			case "mname":
				x.apex.mname, err = parseName(c, args)
			case "rname":
				x.apex.rname, err = parseName(c, args)
			case "ttl":
				x.apex.ttl, err = parseSeconds(c, property, args, 0)
			case "refresh":
				x.apex.refresh, err = parseSeconds(c, property, args, 1)
			case "retry":
				x.apex.retry, err = parseSeconds(c, property, args, 1)
			case "expire":
				x.apex.expire, err = parseSeconds(c, property, args, 1)
			case "minimum":
				x.apex.minimum, err = parseSeconds(c, property, args, 0)
			default:
				err = c.Errf("unknown property %q", property)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if len(x.apex.ns) == 0 {
		return nil, c.Errf("no ns given: secondaries refuse a zone without NS records")
	}
	return x, nil
}

// parseNames reads domain names, lower case and fully qualified.
func parseNames(c *caddy.Controller, args, names []string) ([]string, error) {
	if len(args) == 0 {
		return nil, c.ArgErr()
	}
	for _, arg := range args {
		name := strings.ToLower(dns.Fqdn(arg))
		if _, ok := dns.IsDomainName(name); !ok || name == "." {
			return nil, c.Errf("%q is not a domain name", arg)
		}
		names = append(names, name)
	}
	return names, nil
}

// parseName reads one domain name.
func parseName(c *caddy.Controller, args []string) (string, error) {
	if len(args) != 1 {
		return "", c.ArgErr()
	}
	names, err := parseNames(c, args, nil)
	if err != nil {
		return "", err
	}
	return names[0], nil
}

// parseSeconds reads a TTL or SOA timer: seconds ("3600") or a Go duration
// of whole seconds ("1h"), at least least and at most maxTTL seconds.
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
	if err != nil || s < uint64(least) || s > maxTTL {
		return 0, c.Errf("%s %q is not a number of seconds from %d to %d", property, args[0], least, maxTTL)
	}
	return uint32(s), nil
}
