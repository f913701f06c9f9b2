package globaladdr

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	mwtls "github.com/coredns/coredns/plugin/pkg/tls"
)

// sourceConfig collects a block's from, endpoint, tls and credentials
// properties.
type sourceConfig struct {
	feeds []*feed
	etcd  *etcdConn // nil until an etcd property or source
	// orphan is the error for endpoint, tls or credentials given without a
	// from etcd line: it names the first of them.
	orphan  error
	etcdSrc bool // a from etcd line was seen
}

// parse reads a property: from, endpoint, tls or credentials, with its
// arguments. withAddrs tells whether the directive has ADDRESS arguments,
// which from can't be mixed with.
func (sc *sourceConfig) parse(c *caddy.Controller, property string, args []string, withAddrs bool) error {
	switch property {
	case "from":
		if withAddrs {
			return c.Errf("%q can't be mixed with ADDRESS arguments", property)
		}
		return sc.parseFrom(c, args)
	case "endpoint":
		return sc.parseEndpoint(c, property, args)
	case "tls":
		return sc.parseTLS(c, property, args)
	default: // credentials
		return sc.parseCredentials(c, property, args)
	}
}

// parseFrom reads "from file PATH" or "from etcd KEY".
func (sc *sourceConfig) parseFrom(c *caddy.Controller, args []string) error {
	if len(args) > 0 && args[0] != "file" && args[0] != "etcd" {
		return c.Errf("unknown source %q: want file or etcd", args[0])
	}
	if len(args) != 2 {
		return argErr(c, "from needs a source and its argument: from file PATH or from etcd KEY")
	}
	var src source
	if args[0] == "file" {
		src = &fileSource{path: rootPath(c, args[1]), poll: filePoll}
	} else {
		src = &etcdSource{key: args[1], conn: sc.conn()}
		sc.etcdSrc = true
	}
	for _, f := range sc.feeds {
		if f.src.String() == src.String() {
			return c.Errf("%q: the source %s is given twice", args[1], src)
		}
	}
	sc.feeds = append(sc.feeds, newFeed(src))
	return nil
}

// parseEndpoint reads "endpoint URL...".
func (sc *sourceConfig) parseEndpoint(c *caddy.Controller, property string, args []string) error {
	if len(args) == 0 {
		return argErr(c, "endpoint needs at least one URL")
	}
	for _, arg := range args {
		if !isEndpoint(arg) {
			return c.Errf("%q is not an etcd endpoint URL", arg)
		}
	}
	sc.configure(c, property).endpoints = args
	return nil
}

// parseTLS reads "tls [CERT KEY] CACERT" as the etcd plugin does.
func (sc *sourceConfig) parseTLS(c *caddy.Controller, property string, args []string) error {
	for i := range args {
		args[i] = rootPath(c, args[i])
	}
	cfg, err := mwtls.NewTLSConfigFromArgs(args...)
	if err != nil {
		return c.Errf("%q: %v", strings.Join(append([]string{property}, args...), " "), err)
	}
	sc.configure(c, property).tls = cfg
	return nil
}

// parseCredentials reads "credentials USER PASSWORD".
func (sc *sourceConfig) parseCredentials(c *caddy.Controller, property string, args []string) error {
	if len(args) != 2 {
		return argErr(c, "credentials needs USER and PASSWORD")
	}
	e := sc.configure(c, property)
	e.username, e.password = args[0], args[1]
	return nil
}

// check returns the error for endpoint, tls or credentials without any from
// etcd line.
func (sc *sourceConfig) check() error {
	if sc.orphan != nil && !sc.etcdSrc {
		return sc.orphan
	}
	return nil
}

// sources returns the sources of g; nil when the block has none.
func (sc *sourceConfig) sources(g *GlobalAddr) *sources {
	if len(sc.feeds) == 0 {
		return nil
	}
	s := &sources{g: g, feeds: sc.feeds}
	if sc.etcdSrc {
		s.etcd = sc.etcd
	}
	return s
}

// conn returns the etcd connection of the block's sources.
func (sc *sourceConfig) conn() *etcdConn {
	if sc.etcd == nil {
		sc.etcd = newEtcdConn()
	}
	return sc.etcd
}

// configure returns the etcd connection for property, endpoint, tls or
// credentials, which makes it globaladdr's own.
func (sc *sourceConfig) configure(c *caddy.Controller, property string) *etcdConn {
	if sc.orphan == nil {
		sc.orphan = c.Errf("%q is for from etcd, and there is no from etcd line", property)
	}
	e := sc.conn()
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
