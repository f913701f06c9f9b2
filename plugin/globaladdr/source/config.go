package source

import (
	"net/netip"
	"path/filepath"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
)

// Config collects a block's from, endpoint, tls and credentials properties.
// Its zero value holds none.
type Config struct {
	feeds []*feed
	etcd  *etcdConn // nil until an etcd property or source
	// orphan is the error for endpoint, tls or credentials given without a
	// from etcd line: it names the first of them.
	orphan  error
	etcdSrc bool // a from etcd line was seen
}

// Parse reads property, from or one of etcdclient.Properties, with its
// arguments.
func (cfg *Config) Parse(c *caddy.Controller, property string, args []string) error {
	if property == "from" {
		return cfg.parseFrom(c, args)
	}
	return cfg.configure(c, property).cfg.Parse(c, property, args)
}

// Empty reports whether the block has no from line.
func (cfg *Config) Empty() bool { return len(cfg.feeds) == 0 }

// New returns the sources of the block, whose values must hold no address
// that internal reports; nil when it has none. It fails for endpoint, tls or
// credentials given without a from etcd line.
func (cfg *Config) New(internal func(netip.Addr) bool) (*Set, error) {
	if cfg.orphan != nil && !cfg.etcdSrc {
		return nil, cfg.orphan
	}
	if cfg.Empty() {
		return nil, nil
	}
	s := &Set{feeds: cfg.feeds, internal: internal}
	if cfg.etcdSrc {
		s.etcd = cfg.etcd
	}
	return s, nil
}

// parseFrom reads "from file PATH" or "from etcd KEY".
func (cfg *Config) parseFrom(c *caddy.Controller, args []string) error {
	if len(args) > 0 && args[0] != "file" && args[0] != "etcd" {
		return c.Errf("unknown source %q: want file or etcd", args[0])
	}
	if len(args) != 2 {
		return c.Errf("from needs a source and its argument: from file PATH or from etcd KEY, after %q", c.Val())
	}
	var src source
	if args[0] == "file" {
		src = &fileSource{path: rootPath(c, args[1]), poll: filePoll}
	} else {
		src = &etcdSource{key: args[1], conn: cfg.conn()}
		cfg.etcdSrc = true
	}
	for _, f := range cfg.feeds {
		if f.src.String() == src.String() {
			return c.Errf("%q: the source %s is given twice", args[1], src)
		}
	}
	cfg.feeds = append(cfg.feeds, newFeed(src))
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
// etcdclient.Properties.
func (cfg *Config) configure(c *caddy.Controller, property string) *etcdConn {
	if cfg.orphan == nil {
		cfg.orphan = c.Errf("%q is for from etcd, and there is no from etcd line", property)
	}
	return cfg.conn()
}

// rootPath resolves a relative path against the Corefile's root directive,
// as the file and etcd plugins do.
func rootPath(c *caddy.Controller, path string) string {
	if root := dnsserver.GetConfig(c).Root; root != "" && !filepath.IsAbs(path) {
		return filepath.Join(root, path)
	}
	return path
}
