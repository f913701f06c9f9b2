package etcdzone

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	"github.com/miekg/dns"
)

const pluginName = "etcdzone"

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	x, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	x.cfg = dnsserver.GetConfig(c)
	x.instance = instanceOf(c)
	x.blockZones = plugin.OriginsFromArgsOrServerBlock(nil, c.ServerBlockKeys)
	etcdclient.GuardEtcdSetup(log)
	// The server answers UPDATEs NOTIMP unless a plugin takes them: the
	// zones answer theirs, refused unless the Corefile has update rules.
	x.cfg.AllowOpcode(dns.OpcodeUpdate)
	x.cfg.AddPlugin(func(next plugin.Handler) plugin.Handler {
		x.Next = next
		return x
	})
	expectDoT(c, x.cfg)
	c.OnStartup(func() error { return x.start(x.cfg) })
	c.OnShutdown(x.shutdown)
	return nil
}

// parse reads the etcdzone directive of one server block.
func parse(c *caddy.Controller) (*EtcdZone, error) {
	x := &EtcdZone{apex: zone.Apex{
		TTL:     3600,
		Refresh: 3600,
		Retry:   600,
		Expire:  1209600,
		Minimum: 300,
	}, updateLease: defaultUpdateLease, journalRecords: defaultJournalRecords, journalBytes: defaultJournalBytes}
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, directive.Twice(c, pluginName)
		}
		x.where = directive.Where(c)
		args, err := parseNames(c, c.RemainingArgs())
		if err != nil {
			return nil, err
		}
		x.zoneNames = args
		for c.NextBlock() {
			if err := x.parseProperty(c, c.Val(), c.RemainingArgs()); err != nil {
				return nil, err
			}
		}
	}
	return x, nil
}

// parseProperty reads one property of the directive's block.
func (x *EtcdZone) parseProperty(c *caddy.Controller, property string, args []string) error {
	if etcdclient.IsProperty(property) {
		return x.conn.Parse(c, property, args)
	}
	var err error
	switch property {
	case "ns":
		var names []string
		if names, err = parseNames(c, args); err == nil && len(names) == 0 {
			err = c.ArgErr()
		}
		x.apex.NS = append(x.apex.NS, names...)
	case "mname":
		x.apex.MName, err = parseName(c, args)
	case "rname":
		x.apex.RName, err = parseName(c, args)
	case "ttl":
		x.apex.TTL, err = parseSeconds(c, property, args, 0)
	case "refresh":
		x.apex.Refresh, err = parseSeconds(c, property, args, 1)
	case "retry":
		x.apex.Retry, err = parseSeconds(c, property, args, 1)
	case "expire":
		x.apex.Expire, err = parseSeconds(c, property, args, 1)
	case "minimum":
		x.apex.Minimum, err = parseSeconds(c, property, args, 0)
	case "delegate":
		err = x.parseDelegate(c, args)
	case "glue":
		err = x.parseGlue(c, args)
	case "update":
		err = x.parseUpdateKeys(c, args)
	case "update_allow":
		err = x.parseUpdateAllow(c, args)
	case "update_lease":
		x.updateLease, err = parseLease(c, args)
	case "fallthrough":
		err = x.parseFallthrough(c, args)
	case "journal":
		x.journalRecords, x.journalBytes, err = parseJournal(c, args)
	case "serial_key":
		x.serialKey, err = parseKey(c, args)
		x.serialKeyWhere = directive.Where(c)
	default:
		var ok bool
		if ok, err = x.parseDNSSEC(c, property, args); !ok {
			err = c.Errf("unknown property %q", property)
		}
	}
	return err
}

// The journal's default bounds: room for the changes of a busy day of a
// cluster, far below a zone of 30,000 hosts.
const (
	defaultJournalRecords = 10000
	defaultJournalBytes   = 4 << 20
)

// parseJournal reads "journal RECORDS [BYTES]": at most RECORDS records and
// BYTES bytes (a number, or one with the suffix KiB or MiB) of changes; 0
// keeps none (every IXFR gets the whole zone).
func parseJournal(c *caddy.Controller, args []string) (records, bytes int, err error) {
	if len(args) < 1 || len(args) > 2 {
		return 0, 0, c.ArgErr()
	}
	records, err = strconv.Atoi(args[0])
	if err != nil || records < 0 {
		return 0, 0, c.Errf("journal %q is not a number of records", args[0])
	}
	bytes = defaultJournalBytes
	if len(args) == 2 {
		number, unit := args[1], 1
		for suffix, u := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20} {
			if n, ok := strings.CutSuffix(args[1], suffix); ok {
				number, unit = n, u
			}
		}
		n, err := strconv.Atoi(number)
		if err != nil || n < 0 || n > 1<<30/unit {
			return 0, 0, c.Errf("journal %q is not a number of bytes (with KiB or MiB) up to 1024MiB", args[1])
		}
		bytes = n * unit
	}
	return records, bytes, nil
}

// parseKey reads "serial_key KEY": an etcd key, "/" and a name at least,
// kept without a trailing "/".
func parseKey(c *caddy.Controller, args []string) (string, error) {
	if len(args) != 1 {
		return "", c.ArgErr()
	}
	key := strings.TrimRight(args[0], "/")
	if !strings.HasPrefix(key, "/") {
		return "", c.Errf("serial_key %q is not an etcd key such as /globaladdr/serial/primary", args[0])
	}
	return key, nil
}

// parseDelegate reads "delegate NAME NS...".
func (x *EtcdZone) parseDelegate(c *caddy.Controller, args []string) error {
	names, err := parseNames(c, args)
	switch {
	case err != nil:
		return err
	case len(names) < 2:
		return c.Errf("delegate needs a subdomain and its name servers")
	case slices.ContainsFunc(x.delegations, func(d delegation) bool { return d.name == names[0] }):
		return c.Errf("%q is delegated twice", names[0])
	}
	x.delegations = append(x.delegations, delegation{name: names[0], ns: names[1:], where: directive.Where(c)})
	return nil
}

// parseGlue reads "glue NAME ADDRESS...".
func (x *EtcdZone) parseGlue(c *caddy.Controller, args []string) error {
	if len(args) < 2 {
		return c.Errf("glue needs a name server and its addresses")
	}
	name, err := parseName(c, args[:1])
	if err != nil {
		return err
	}
	g := glue{name: name, where: directive.Where(c)}
	for _, arg := range strings.Fields(strings.Join(args[1:], " ")) {
		a, err := netip.ParseAddr(arg)
		if err != nil || a.Zone() != "" || a.Is4In6() {
			return c.Errf("%q is not an IPv4 or IPv6 address", arg)
		}
		g.addrs = append(g.addrs, a)
	}
	x.glue = append(x.glue, g)
	return nil
}

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
