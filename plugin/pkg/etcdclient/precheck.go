package etcdclient

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/coredns/caddy"
	"github.com/coredns/caddy/caddyfile"
	"github.com/coredns/coredns/core/dnsserver"
)

// holders are the directives that hold etcd credentials of their own, with
// whether each takes plaintext_credentials: CoreDNS's etcd plugin, which
// does not, and ours.
var holders = []struct {
	dir         string
	plaintextOK bool
}{{"etcd", false}, {"etcdzone", true}, {"globaladdr", true}, {"webhook", true}}

// The check of every Corefile before any plugin connects to etcd: the etcd
// plugin is CoreDNS's, and its set-up logs in as soon as it runs, over
// whatever endpoint it is given. CoreDNS sets the directives up in order,
// each for every server block before the next, and caddy runs the parsing
// callbacks of a directive after it: registered after each directive there
// is, the check runs after the first one (root, in CoreDNS's order and
// plugin.cfg's), before the etcd plugin's and ours, on a first start and on
// every reload alike.
func init() {
	for _, dir := range dnsserver.Directives {
		caddy.RegisterParsingCallback("dns", dir, checkCorefiles)
	}
}

// checked is the context of the start last checked: the callbacks of the
// directives after the first have nothing left to check.
var checked struct {
	sync.Mutex
	ctx caddy.Context
}

// checkCorefiles refuses to start a Corefile with credentials over an
// endpoint that does not encrypt (CheckCorefile), before any plugin opens a
// connection. It checks the Corefile of every instance that is being
// started (one that has no servers yet): the callback is not told which
// one is its own.
func checkCorefiles(ctx caddy.Context) error {
	checked.Lock()
	defer checked.Unlock()
	if ctx == checked.ctx {
		return nil
	}
	checked.ctx = ctx
	for _, inst := range caddy.Instances() {
		if len(inst.Servers()) > 0 || inst.Caddyfile() == nil {
			continue
		}
		if err := CheckCorefile(inst.Caddyfile()); err != nil {
			return err
		}
	}
	return nil
}

// CheckCorefile returns why the Corefile in must not start: a directive of
// holders with credentials over an endpoint that does not encrypt (its own
// endpoints, or the etcd plugin's default http://localhost:2379 when it
// gives none), unless the directive takes plaintext_credentials and gives
// it. The error names the plugin, the server block, the file and line of
// the credentials, and the fix.
func CheckCorefile(in caddy.Input) error {
	dirs := slices.Clone(caddy.ValidDirectives(in.ServerType()))
	for _, h := range holders {
		dirs = append(dirs, h.dir) // in a build without them, what they would be
	}
	blocks, err := caddyfile.Parse(in.Path(), bytes.NewReader(in.Body()), dirs)
	if err != nil {
		return nil // caddy refuses it in its own words, before any set-up
	}
	for _, sb := range blocks {
		for _, h := range holders {
			if err := checkHolder(in.Path(), sb, h.dir, h.plaintextOK); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkHolder checks the directive dir of the server block sb of file (see
// CheckCorefile). It reads every token of the directive, wherever it
// stands, rather than its properties one a line: the etcd plugin reads some
// properties with a single argument and the rest of their line as a
// property of its own, so "path /skydns credentials u p" gives it
// credentials. Each endpoint line counts, whichever the plugin keeps.
func checkHolder(file string, sb caddyfile.ServerBlock, dir string, plaintextOK bool) error {
	tokens := sb.Tokens[dir]
	var (
		cfg   Config
		where string // the file and line of the credentials
	)
	for i, tok := range tokens {
		args := lineArgs(tokens[i+1:], tok)
		switch tok.Text {
		case "endpoint":
			cfg.Endpoints = append(cfg.Endpoints, splitEndpoints(args)...)
		case "credentials":
			if !unset(tok.Text, args) {
				cfg.Username, where = "-", fmt.Sprintf("%s:%d", file, tok.Line)
			}
		case "plaintext_credentials":
			cfg.Plaintext = plaintextOK
		}
	}
	err := cfg.Check()
	if err == nil {
		return nil
	}
	if !plaintextOK {
		err = fmt.Errorf("credentials over %s would send the password in clear: use an https:// endpoint "+
			"(%s has no plaintext_credentials: to allow it, give endpoint, credentials and plaintext_credentials to etcdzone instead)",
			cfg.insecure(), dir)
	}
	return fmt.Errorf("plugin/%s: %s - Error during parsing: server block %s: %v", dir, where, strings.Join(sb.Keys, " "), err)
}

// lineArgs returns the texts of the tokens at the start of rest that stand
// on tok's line, but for braces.
func lineArgs(rest []caddyfile.Token, tok caddyfile.Token) []string {
	var args []string
	for _, t := range rest {
		if t.Line != tok.Line || t.File != tok.File {
			break
		}
		if t.Text != "{" && t.Text != "}" {
			args = append(args, t.Text)
		}
	}
	return args
}
