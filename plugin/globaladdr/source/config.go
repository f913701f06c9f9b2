package source

import (
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	mwtls "github.com/coredns/coredns/plugin/pkg/tls"
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

// Parse reads property, one of from, endpoint, tls and credentials, with
// its arguments.
func (cfg *Config) Parse(c *caddy.Controller, property string, args []string) error {
	switch property {
	case "from":
		return cfg.parseFrom(c, args)
	case "endpoint":
		return cfg.parseEndpoint(c, property, args)
	case "tls":
		return cfg.parseTLS(c, property, args)
	default: // credentials
		return cfg.parseCredentials(c, property, args)
	}
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

// parseEndpoint reads "endpoint URL...".
func (cfg *Config) parseEndpoint(c *caddy.Controller, property string, args []string) error {
	if len(args) == 0 {
		return c.Errf("endpoint needs at least one URL, after %q", c.Val())
	}
	for _, arg := range args {
		if !isEndpoint(arg) {
			return c.Errf("%q is not an etcd endpoint URL", arg)
		}
	}
	cfg.configure(c, property).endpoints = args
	return nil
}

// parseTLS reads "tls [CERT KEY] CACERT" as the etcd plugin does.
func (cfg *Config) parseTLS(c *caddy.Controller, property string, args []string) error {
	for i := range args {
		args[i] = rootPath(c, args[i])
	}
	tls, err := mwtls.NewTLSConfigFromArgs(args...)
	if err != nil {
		return c.Errf("%q: %v", strings.Join(append([]string{property}, args...), " "), err)
	}
	cfg.configure(c, property).tls = tls
	return nil
}

// parseCredentials reads "credentials USER PASSWORD".
func (cfg *Config) parseCredentials(c *caddy.Controller, property string, args []string) error {
	if len(args) != 2 {
		return c.Errf("credentials needs USER and PASSWORD, after %q", c.Val())
	}
	e := cfg.configure(c, property)
	e.username, e.password = args[0], args[1]
	return nil
}

// conn returns the etcd connection of the block's sources.
func (cfg *Config) conn() *etcdConn {
	if cfg.etcd == nil {
		cfg.etcd = newEtcdConn()
	}
	return cfg.etcd
}

// configure returns the etcd connection for property, endpoint, tls or
// credentials, which makes it globaladdr's own.
func (cfg *Config) configure(c *caddy.Controller, property string) *etcdConn {
	if cfg.orphan == nil {
		cfg.orphan = c.Errf("%q is for from etcd, and there is no from etcd line", property)
	}
	e := cfg.conn()
	e.configured = true
	return e
}

// isEndpoint reports whether s is an endpoint the etcd client takes: a URL
// of scheme http, https, unix or unixs, or a bare host:port.
func isEndpoint(s string) bool {
	if !strings.Contains(s, "://") {
		_, _, err := net.SplitHostPort(s)
		return err == nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "http", "https":
		return u.Host != ""
	case "unix", "unixs":
		return u.Host != "" || u.Path != ""
	}
	return false
}

// rootPath resolves a relative path against the Corefile's root directive,
// as the file and etcd plugins do.
func rootPath(c *caddy.Controller, path string) string {
	if root := dnsserver.GetConfig(c).Root; root != "" && !filepath.IsAbs(path) {
		return filepath.Join(root, path)
	}
	return path
}
