package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
)

const pluginName = "webhook"

var log = clog.NewWithPlugin(pluginName)

// defaultAddr is where the API listens without ADDRESS: the port webhook
// providers of external-dns listen on, on loopback.
const defaultAddr = "127.0.0.1:8888"

// defaultPath is the etcd plugin's default path, and external-dns's
// --coredns-prefix.
const defaultPath = "/skydns"

// defaultMaxOps is etcd's default --max-txn-ops.
const defaultMaxOps = 128

func init() { plugin.Register(pluginName, setup) }

// setup reads the webhook directive. The plugin answers no DNS question: it
// runs its HTTP listeners beside the server block, as health does.
func setup(c *caddy.Controller) error {
	w, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	for _, z := range plugin.OriginsFromArgsOrServerBlock(nil, c.ServerBlockKeys) {
		if z = strings.TrimSuffix(strings.ToLower(z), "."); z != "" {
			w.store.Zones = append(w.store.Zones, z)
		}
	}
	etcdclient.GuardEtcdSetup(log)
	c.OnStartup(w.start)
	c.OnRestart(w.stop)
	c.OnRestartFailed(w.start)
	c.OnFinalShutdown(w.stop)
	return nil
}

// properties are the properties parse reads but the etcd connection's,
// for a "did you mean".
var properties = []string{"path", "health", "max_txn_ops", "max_body_size", "allow_remote"}

// parse reads
//
//	webhook [ADDRESS] {
//	    path PATH
//	    endpoint URL...
//	    tls [CERT KEY] CACERT
//	    credentials USER PASSWORD
//	    plaintext_credentials
//	    health ADDRESS
//	    max_txn_ops N
//	    max_body_size SIZE
//	    allow_remote
//	}
func parse(c *caddy.Controller) (*Webhook, error) {
	w := &Webhook{addr: defaultAddr}
	w.store.Prefix = defaultPath + "/"
	w.store.MaxOps = defaultMaxOps
	w.body.max = defaultMaxBody
	remote := false
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, directive.Twice(c, pluginName)
		}
		args := c.RemainingArgs()
		switch len(args) {
		case 0:
		case 1:
			w.addr = args[0]
		default:
			return nil, c.Errf("%s takes one ADDRESS, not %q", pluginName, strings.Join(args, " "))
		}
		if err := hostPort(w.addr); err != nil {
			return nil, c.Errf("ADDRESS %q %v", w.addr, err)
		}
		for c.NextBlock() {
			property, args := c.Val(), c.RemainingArgs()
			var err error
			switch property {
			case "path":
				if len(args) != 1 || !strings.HasPrefix(args[0], "/") {
					return nil, c.Errf("path needs one etcd path, starting with /")
				}
				w.store.Prefix = strings.TrimSuffix(args[0], "/") + "/"
			case "health":
				if len(args) != 1 {
					return nil, c.Errf("health needs one ADDRESS")
				}
				if err := hostPort(args[0]); err != nil {
					return nil, c.Errf("health ADDRESS %q %v", args[0], err)
				}
				w.healthAddr = args[0]
			case "max_txn_ops":
				if len(args) != 1 {
					return nil, c.Errf("max_txn_ops needs one number")
				}
				if w.store.MaxOps, err = parseCount(args[0]); err != nil {
					return nil, c.Errf("max_txn_ops %q: %v", args[0], err)
				}
			case "max_body_size":
				n, ok := 0, len(args) == 1
				if ok {
					n, ok = directive.Bytes(args[0])
				}
				if !ok || n < 1<<10 {
					return nil, c.Errf("max_body_size %q needs one size in bytes (with KiB or MiB), from 1KiB up to 1024MiB", strings.Join(args, " "))
				}
				w.body.max = int64(n)
			case "allow_remote":
				if len(args) != 0 {
					return nil, c.Errf("allow_remote takes no argument")
				}
				remote = true
			default:
				if !etcdclient.IsProperty(property) {
					return nil, directive.Unknown(c, property, append(etcdclient.Properties(), properties...))
				}
				err = w.conn.Parse(c, property, args)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if err := w.conn.Check(); err != nil {
		return nil, c.Errf("%v", err)
	}
	if !remote && !loopback(w.addr) {
		return nil, c.Errf("ADDRESS %s is not a loopback address: the webhook API has no authentication, and anyone who reaches it can rewrite every record of the zones; give allow_remote to listen there anyway", w.addr)
	}
	return w, nil
}

// hostPort returns nil when addr is host:port with a port: an unset
// placeholder ({$WEBHOOK_PORT}, {$HEALTH_PORT}) leaves none, where the
// listener would take a port the system picks, which nobody calls. Port 0,
// given so, is kept: the tests listen on it.
func hostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil:
		return fmt.Errorf("is not host:port: %v", err)
	case port == "":
		return errors.New("has no port: is its placeholder (WEBHOOK_PORT, HEALTH_PORT in webhook.Corefile) unset?")
	}
	return nil
}

// loopback reports whether addr, host:port, listens on loopback alone
// (localhost included).
func loopback(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// parseCount reads a positive number.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n < 1 {
		err = errors.New("not a positive number")
	}
	return n, err
}
