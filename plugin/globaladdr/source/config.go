package source

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/coredns/caddy"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/uplink"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
)

// defaultEvery is how often the polled sources ask, without an every
// property: a rate that routers and public STUN servers accept.
const defaultEvery = 60 * time.Second

// minEvery is the shortest every the Corefile may give.
const minEvery = time.Second

// Config collects a block's from, every, endpoint, tls and credentials
// properties, and the sources of its map FROM from SOURCE lines. Its zero
// value holds none.
type Config struct {
	feeds []*feed
	froms int           // the from lines among feeds
	every time.Duration // 0 until an every property
	// everyAt is the error for every given without a polled source.
	everyAt error
	httpsCA probe.HTTPSCA
	etcd    *etcdConn // nil until an etcd property or source
	// orphan is the error for endpoint, tls or credentials given without a
	// from etcd line: it names the first of them.
	orphan  error
	etcdSrc bool // a from etcd line was seen
	// uplinks are the block's named uplinks; sourceless holds, for each,
	// the error for an uplink without a from or static line.
	uplinks    uplink.Config
	sourceless map[*uplink.Uplink]error
}

// Parse reads property, one of from, uplink, failover, failback, every,
// https_ca and the etcd connection's (etcdclient.IsProperty), with its
// arguments.
func (cfg *Config) Parse(c *caddy.Controller, property string, args []string) error {
	switch property {
	case "from":
		return cfg.parseFrom(c, args, nil)
	case "uplink":
		return cfg.parseUplink(c, args)
	case "failover", "failback":
		return cfg.uplinks.ParseHold(c, property, args)
	case "every":
		return cfg.parseEvery(c, args)
	case "https_ca":
		return cfg.httpsCA.Parse(c, args)
	}
	return cfg.configure(c, property).cfg.Parse(c, property, args)
}

// properties are the properties Parse reads itself.
var properties = []string{"from", "uplink", "failover", "failback", "every", "https_ca"}

// IsProperty reports whether property is one Parse reads.
func IsProperty(property string) bool {
	return slices.Contains(properties, property) || etcdclient.IsProperty(property)
}

// Properties returns the properties Parse reads, for a "did you mean".
func Properties() []string { return append(slices.Clone(properties), etcdclient.Properties()...) }

// parseUplink reads "uplink NAME PROPERTY ARGS...": from SOURCE ARGS and
// static ADDRESS... give the uplink its addresses, the others are its own
// (uplink.Parse).
func (cfg *Config) parseUplink(c *caddy.Controller, args []string) error {
	if len(args) < 2 {
		return c.Errf("uplink needs a NAME and a property (from, static, via, check, priority), after %q", c.Val())
	}
	u, err := cfg.uplinks.Named(c, args[0])
	if err != nil {
		return err
	}
	if cfg.sourceless == nil {
		cfg.sourceless = map[*uplink.Uplink]error{}
	}
	if _, seen := cfg.sourceless[u]; !seen {
		cfg.sourceless[u] = c.Errf("uplink %s has no addresses: give it a from line (uplink %s from https URL) or static ADDRESS...", u.Name, u.Name)
	}
	switch args[1] {
	case "from":
		return cfg.parseFrom(c, args[2:], u)
	case "static":
		return cfg.parseStatic(c, u, args[2:])
	}
	return uplink.Parse(c, u, args[1], args[2:])
}

// parseStatic reads "uplink NAME static ADDRESS...".
func (cfg *Config) parseStatic(c *caddy.Controller, u *uplink.Uplink, args []string) error {
	if len(args) == 0 {
		return c.Errf("uplink %s static needs at least one ADDRESS, after %q", u.Name, c.Val())
	}
	for _, arg := range args {
		if _, ok := probe.ParseAddr(arg); !ok {
			return c.Errf("uplink %s static: %q is not an IPv4 or IPv6 address", u.Name, arg)
		}
	}
	f := valueFeed(&staticSource{addrs: args})
	f.up = u
	if err := cfg.add(c, f, args); err != nil {
		return err
	}
	cfg.froms++
	return nil
}

// Empty reports whether the block has no from line.
func (cfg *Config) Empty() bool { return cfg.froms == 0 }

// New returns the sources of the block, whose values must hold no address
// that internal reports; nil when it has none. It fails for endpoint, tls or
// credentials given without a from etcd source, and for every given without
// a polled source.
func (cfg *Config) New(internal func(netip.Addr) bool) (*Set, error) {
	if cfg.orphan != nil && !cfg.etcdSrc {
		return nil, cfg.orphan
	}
	if err := cfg.uplinks.Finish(); err != nil {
		return nil, err
	}
	every := cmp.Or(cfg.every, defaultEvery)
	polled := false
	var probers []probe.Prober
	var checks []probe.Check
	for _, f := range cfg.feeds {
		delete(cfg.sourceless, f.up)
		if f.line == nil {
			continue
		}
		f.line.internal = internal
		if f.line.kind != probe.Local {
			f.line.every = every
			polled = true
		}
		if f.up != nil {
			f.up.Route(f.line.probers)
		}
		probers = append(probers, f.line.probers...)
	}
	for _, u := range cfg.uplinks.Uplinks() {
		if err := cfg.sourceless[u]; err != nil {
			return nil, err
		}
		if u.Check != nil {
			u.Route(nil)
			checks = append(checks, u.Check)
			polled = true
		}
	}
	if cfg.everyAt != nil && !polled {
		return nil, cfg.everyAt
	}
	if err := cfg.httpsCA.Give(probers, checks); err != nil {
		return nil, err
	}
	if len(cfg.feeds) == 0 {
		return nil, nil
	}
	s := &Set{feeds: cfg.feeds, internal: internal, uplinks: cfg.uplinks.Uplinks(), every: every}
	if cfg.etcdSrc {
		s.etcd = cfg.etcd
	}
	return s, nil
}

// parseFrom reads "from SOURCE ARGS...": file PATH, etcd KEY, interface
// NAME, or a polled source's keyword and arguments (probe.Register), of
// the uplink up (nil for a from line of its own).
func (cfg *Config) parseFrom(c *caddy.Controller, args []string, up *uplink.Uplink) error {
	if len(args) == 0 {
		return c.Errf("from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after %q", c.Val())
	}
	var f *feed
	switch args[0] {
	case "file", "etcd", "interface":
		var err error
		if f, err = cfg.textOrInterface(c, args); err != nil {
			return err
		}
	default:
		l, err := parsePolled(c, args)
		if err != nil {
			return err
		}
		f = lineFeed(l)
	}
	f.up = up
	if err := cfg.add(c, f, args); err != nil {
		return err
	}
	cfg.froms++
	return nil
}

// ParseMapFrom reads the SOURCE ARG of "map FROM from SOURCE ARG", SOURCE
// being interface NAME, file PATH or etcd KEY, and returns the prefix it
// will keep up to date once the Set starts.
func (cfg *Config) ParseMapFrom(c *caddy.Controller, from netip.Prefix, args []string) (*Prefix, error) {
	if len(args) == 0 || args[0] != "file" && args[0] != "etcd" && args[0] != "interface" {
		return nil, c.Errf("map FROM from needs a prefix source: interface NAME, file PATH or etcd KEY, after %q", c.Val())
	}
	if !from.Addr().Is6() {
		return nil, c.Errf("map %s from %s: a prefix from a source is for IPv6 only", from, args[0])
	}
	f, err := cfg.textOrInterface(c, args)
	if err != nil {
		return nil, err
	}
	f.prefix = &Prefix{from: from}
	return f.prefix, cfg.add(c, f, args)
}

// textOrInterface returns the feed of "file PATH", "etcd KEY" or
// "interface NAME" (args).
func (cfg *Config) textOrInterface(c *caddy.Controller, args []string) (*feed, error) {
	if len(args) != 2 {
		return nil, c.Errf("from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after %q", c.Val())
	}
	switch args[0] {
	case "file":
		return valueFeed(newFileSource(c, args[1])), nil
	case "etcd":
		cfg.etcdSrc = true
		return valueFeed(newEtcdSource(args[1], cfg.conn())), nil
	}
	return lineFeed(interfaceLine(args[1])), nil
}

// add adds f to the block's feeds, unless its source is given twice in the
// same role.
func (cfg *Config) add(c *caddy.Controller, f *feed, args []string) error {
	for _, g := range cfg.feeds {
		if g.String() == f.String() && (g.prefix == nil) == (f.prefix == nil) {
			return c.Errf("%q: the source %s is given twice", args[len(args)-1], f)
		}
	}
	cfg.feeds = append(cfg.feeds, f)
	return nil
}

// parseEvery reads "every DURATION".
func (cfg *Config) parseEvery(c *caddy.Controller, args []string) error {
	if len(args) != 1 {
		return c.Errf("every needs one DURATION, after %q", c.Val())
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d < minEvery {
		return c.Errf("every %q is not a duration of at least %s (say 60s)", args[0], minEvery)
	}
	cfg.every = d
	cfg.everyAt = c.Errf("%q is for the polled sources (%s) and the uplinks' checks, and there is none", "every", strings.Join(probe.Keywords(), ", "))
	return nil
}

// conn returns the etcd connection of the block's sources.
func (cfg *Config) conn() *etcdConn {
	if cfg.etcd == nil {
		cfg.etcd = &etcdConn{}
	}
	return cfg.etcd
}

// configure returns the etcd connection for property, one of
// the etcd connection's (etcdclient.IsProperty).
func (cfg *Config) configure(c *caddy.Controller, property string) *etcdConn {
	if cfg.orphan == nil {
		cfg.orphan = c.Errf("%q is for from etcd, and there is no from etcd line", property)
	}
	return cfg.conn()
}
