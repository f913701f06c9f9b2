// Package etcdclient is the etcd connection of globaladdr's plugins
// (etcdzone, globaladdr's from etcd) as operators run etcd: a cluster of
// several endpoints, TLS with client certificates, credentials sent only
// over an encrypted connection unless the Corefile says plainly that it
// wants them in clear, a deadline on every dial, login and read, auth tokens
// renewed on every supported etcd release (3.4's refusal of a stale token
// included, etcd-io/etcd#12165), the etcd client's log routed through
// CoreDNS's, failures that name their cause, and liveness: how long since
// the connection last heard from etcd, with a warning when it hears nothing.
package etcdclient

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/coredns/caddy"
	mwtls "github.com/coredns/coredns/plugin/pkg/tls"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

// DefaultEndpoint is the etcd plugin's default endpoint.
const DefaultEndpoint = "http://localhost:2379"

// Config is an etcd connection as a Corefile block gives it, with the etcd
// plugin's syntax: endpoint, tls, credentials, and plaintext_credentials.
// Its zero value has none of them.
type Config struct {
	// Endpoints are the cluster's client URLs.
	Endpoints []string
	// TLS is the configuration of https:// and unixs:// endpoints; nil
	// for the system's roots and no client certificate.
	TLS *tls.Config
	// Username and Password log in; empty for none (or for the client
	// certificate's common name as the user).
	Username, Password string
	// Plaintext allows credentials over http:// or unix:// endpoints.
	Plaintext bool
	// given is the first property given, for errors; "" for none.
	given string
	// where is the file and line of the endpoint property, for log
	// lines; "" when the Corefile gives none.
	where string
	// tlsFiles are the files tls names, for ID.
	tlsFiles []string
}

// ID returns what tells the connection apart from another: two configs with
// the same ID open the same connection (same endpoints, TLS files,
// credentials). It holds the password: never log it.
func (cfg *Config) ID() string {
	return fmt.Sprintf("%q %q %q %q %v", cfg.endpoints(), cfg.tlsFiles, cfg.Username, cfg.Password, cfg.Plaintext)
}

// place returns " (FILE:LINE, endpoint)" for the Corefile's endpoint
// line, " (the default endpoint)" when the Corefile gives none.
func (cfg *Config) place() string {
	switch {
	case cfg.where != "":
		return " (" + cfg.where + ", endpoint)"
	case len(cfg.Endpoints) == 0:
		return " (the default endpoint)"
	}
	return ""
}

// String names the connection in log lines: its endpoints (never the
// credentials).
func (cfg *Config) String() string { return strings.Join(cfg.endpoints(), ",") }

// properties are the properties Parse reads.
var properties = []string{"endpoint", "tls", "credentials", "plaintext_credentials"}

// IsProperty reports whether property is one of the connection's, which
// Parse reads.
func IsProperty(property string) bool { return slices.Contains(properties, property) }

// Properties returns the connection's properties, for a "did you mean".
func Properties() []string { return slices.Clone(properties) }

// Given reports whether the Corefile gave any of the connection's
// properties.
func (cfg *Config) Given() bool { return cfg.given != "" }

// First returns the first property given, "" for none.
func (cfg *Config) First() string { return cfg.given }

// Parse reads property, one of the connection's (IsProperty), with its arguments:
//
//	endpoint URL...                  (several URLs may share an argument,
//	                                  separated by spaces or commas)
//	tls [CERT KEY] CACERT
//	credentials USER PASSWORD
//	plaintext_credentials
//
// A tls or credentials whose arguments are all empty, as unset placeholders
// such as {$ETCD_CA} expand, is left out: a Corefile can name them for the
// sites that use them and still run where none is set.
func (cfg *Config) Parse(c *caddy.Controller, property string, args []string) error {
	if unset(property, args) {
		return nil
	}
	var err error
	switch property {
	case "endpoint":
		cfg.Endpoints, err = parseEndpoints(c, args)
		cfg.where = directive.Where(c)
	case "tls":
		err = cfg.parseTLS(c, args)
	case "credentials":
		if len(args) != 2 || args[0] == "" || args[1] == "" {
			return c.Errf("credentials needs USER and PASSWORD, after %q", c.Val())
		}
		cfg.Username, cfg.Password = args[0], args[1]
	case "plaintext_credentials":
		if len(args) != 0 {
			return c.ArgErr()
		}
		cfg.Plaintext = true
	default:
		return c.Errf("unknown property %q", property)
	}
	if err == nil && cfg.given == "" {
		cfg.given = property
	}
	return err
}

// unset reports whether property is tls or credentials with arguments, all
// of them empty.
func unset(property string, args []string) bool {
	return (property == "tls" || property == "credentials") && len(args) > 0 &&
		!slices.ContainsFunc(args, func(a string) bool { return a != "" })
}

// parseEndpoints reads the endpoints' URLs: an argument may hold several,
// separated by spaces or commas, as a placeholder such as {$ETCD_ENDPOINT}
// expands to one argument.
func parseEndpoints(c *caddy.Controller, args []string) ([]string, error) {
	eps := splitEndpoints(args)
	for _, ep := range eps {
		if !isEndpoint(ep) {
			return nil, c.Errf("%q is not an etcd endpoint URL", ep)
		}
	}
	if len(eps) == 0 {
		return nil, c.Errf("endpoint needs at least one URL, after %q", c.Val())
	}
	return eps, nil
}

// splitEndpoints returns the endpoints that args hold, several to an
// argument separated by spaces or commas.
func splitEndpoints(args []string) []string {
	var eps []string
	for _, arg := range args {
		eps = slices.AppendSeq(eps, strings.FieldsFuncSeq(arg, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }))
	}
	return eps
}

// parseTLS reads "tls [CERT KEY] CACERT" as the etcd plugin does.
func (cfg *Config) parseTLS(c *caddy.Controller, args []string) error {
	if slices.Contains(args, "") {
		return c.Errf("tls needs CERT and KEY together, and CACERT: %q has an empty one", strings.Join(args, " "))
	}
	for i := range args {
		args[i] = directive.Rooted(c, args[i])
	}
	t, err := mwtls.NewTLSConfigFromArgs(args...)
	if err != nil {
		return c.Errf("%q: %v", strings.Join(append([]string{"tls"}, args...), " "), err)
	}
	cfg.TLS, cfg.tlsFiles = t, args
	return nil
}

// Check returns why the connection must not be opened: credentials or a
// client certificate over an endpoint that does not encrypt (the etcd
// client sends them in clear, or silently leaves the certificate out),
// unless Plaintext allows the credentials.
func (cfg *Config) Check() error {
	for _, ep := range cfg.endpoints() {
		if secure(ep) {
			continue
		}
		switch {
		case cfg.Username != "" && !cfg.Plaintext:
			return fmt.Errorf("credentials over %s would send the password in clear: use an https:// endpoint, or plaintext_credentials to allow it", ep)
		case cfg.TLS != nil && len(cfg.TLS.Certificates) > 0:
			return fmt.Errorf("tls with a client certificate over %s, which does not encrypt: the certificate would not be sent; use an https:// endpoint", ep)
		}
	}
	return nil
}

// insecure returns the first endpoint that does not encrypt, "" for none.
func (cfg *Config) insecure() string {
	for _, ep := range cfg.endpoints() {
		if !secure(ep) {
			return ep
		}
	}
	return ""
}

// endpoints returns the endpoints, the default one when none is given.
func (cfg *Config) endpoints() []string {
	if len(cfg.Endpoints) == 0 {
		return []string{DefaultEndpoint}
	}
	return cfg.Endpoints
}

// secure reports whether the etcd client encrypts its connection to ep.
func secure(ep string) bool {
	return strings.HasPrefix(ep, "https://") || strings.HasPrefix(ep, "unixs:")
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
