package publish

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
	"github.com/globaladdr/globaladdr/plugin/publish/endpoints"

	"k8s.io/apimachinery/pkg/util/validation"
)

const pluginName = "publish"

var log = clog.NewWithPlugin(pluginName)

// defaultLeaseDuration is how long a Lease holds without renewal, as
// kube-controller-manager's own election has it.
const defaultLeaseDuration = 15 * time.Second

func init() { plugin.Register(pluginName, setup) }

// setup reads the publish directive; the publication runs beside the
// server block, from its start to its shutdown, and answers no query.
func setup(c *caddy.Controller) error {
	p, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	if zone, where := p.claim(c); zone != "" {
		return p.errorf("zone %s: the publish at %s writes its set into the same namespace, "+
			"and the two blocks would take turns writing it, each with its own view; give one of them set NAME, or another namespace", zone, where)
	}
	p.carryReady()
	cfg := dnsserver.GetConfig(c)
	c.OnStartup(func() error { return p.start(cfg) })
	c.OnRestart(p.stop)
	c.OnRestartFailed(func() error { return p.start(cfg) })
	c.OnFinalShutdown(p.stop)
	c.OnFinalShutdown(p.forgetReady)
	cfg.AddPlugin(func(next plugin.Handler) plugin.Handler {
		p.Next = next
		return p
	})
	return nil
}

// properties are the properties parse reads, for a "did you mean".
var properties = []string{"kubeconfig", "namespace", "lease", "set", "labels", "property"}

// parse reads
//
//	publish [ZONES...] {
//	    kubeconfig [KUBECONFIG [CONTEXT]]
//	    namespace [NAMESPACE]
//	    lease NAME [DURATION]
//	    labels KEY=VALUE...
//	    set NAME
//	    property NAME VALUE [tunnelled]
//	}
func parse(c *caddy.Controller) (*Publish, error) {
	p := &Publish{leaseDuration: defaultLeaseDuration, labels: map[string]string{}}
	for i := 0; c.Next(); i++ {
		if i > 0 {
			return nil, directive.Twice(c, pluginName)
		}
		p.where = directive.Where(c)
		p.block = blockOf(c.ServerBlockKeys[0])
		p.zones = plugin.OriginsFromArgsOrServerBlock(c.RemainingArgs(), c.ServerBlockKeys)
		for _, z := range p.zones {
			if !inBlock(z, c.ServerBlockKeys) {
				return nil, c.Errf("zone %s is not in this server block", z)
			}
		}
		for c.NextBlock() {
			property, args := c.Val(), c.RemainingArgs()
			switch property {
			case "kubeconfig":
				if len(args) > 2 {
					return nil, c.Errf("kubeconfig takes a KUBECONFIG file and a CONTEXT, not %q", strings.Join(args, " "))
				}
				p.kubeconfig, p.context = arg(args, 0), arg(args, 1)
			case "namespace":
				if len(args) > 1 {
					return nil, c.Errf("namespace takes one NAMESPACE, not %q", strings.Join(args, " "))
				}
				if p.namespace = arg(args, 0); p.namespace != "" {
					if errs := validation.IsDNS1123Label(p.namespace); len(errs) > 0 {
						return nil, c.Errf("namespace %q: %s", p.namespace, strings.Join(errs, "; "))
					}
				}
			case "lease":
				if len(args) < 1 || len(args) > 2 {
					return nil, c.Errf("lease takes a NAME and a DURATION")
				}
				if errs := validation.IsDNS1123Subdomain(args[0]); len(errs) > 0 {
					return nil, c.Errf("lease %q: %s", args[0], strings.Join(errs, "; "))
				}
				p.lease = args[0]
				if len(args) == 2 {
					d, err := time.ParseDuration(args[1])
					if err != nil || d < 2*time.Second {
						return nil, c.Errf("lease DURATION %q: not a duration of 2s or more", args[1])
					}
					p.leaseDuration = d
				}
			case "set":
				if len(args) != 1 {
					return nil, c.Errf("set takes one NAME")
				}
				if errs := validation.IsDNS1123Label(args[0]); len(errs) > 0 {
					return nil, c.Errf("set %q: %s", args[0], strings.Join(errs, "; "))
				}
				p.setName = args[0]
			case "labels":
				if len(args) == 0 {
					return nil, c.Errf("labels takes KEY=VALUE pairs")
				}
				for _, a := range args {
					if err := p.addLabel(a); err != nil {
						return nil, c.Errf("labels %q: %v", a, err)
					}
				}
			case "property":
				pr, err := parseProperty(c, args)
				if err != nil {
					return nil, err
				}
				p.properties = append(p.properties, pr)
			default:
				return nil, directive.Unknown(c, property, properties)
			}
		}
	}
	return p, nil
}

// parseProperty reads "property NAME VALUE [tunnelled]": a providerSpecific
// property of the endpoints, every one or the CNAMEs to the view's tunnel.
func parseProperty(c *caddy.Controller, args []string) (endpoints.Property, error) {
	if len(args) < 2 || len(args) > 3 || (len(args) == 3 && args[2] != "tunnelled") {
		return endpoints.Property{}, c.Errf("property takes a NAME, a VALUE and, for the tunnel's CNAMEs alone, tunnelled, not %q", strings.Join(args, " "))
	}
	return endpoints.Property{Name: args[0], Value: args[1], Tunnelled: len(args) == 3}, nil
}

// addLabel adds the label KEY=VALUE a to those of the objects; the labels
// the plugin sets itself can't be given.
func (p *Publish) addLabel(a string) error {
	key, value, ok := strings.Cut(a, "=")
	if !ok {
		return fmt.Errorf("not KEY=VALUE")
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if key == managedByLabel || key == zoneLabel || key == setLabel || key == blockLabel {
		return fmt.Errorf("%s is set by %s itself", key, pluginName)
	}
	p.labels[key] = value
	return nil
}

// blockOf returns the server block key as a name: its zone without the
// final dot, and its port (example.com-53).
func blockOf(key string) string {
	if _, rest, ok := strings.Cut(key, "://"); ok {
		key = rest
	}
	if host, port, err := net.SplitHostPort(key); err == nil {
		return strings.TrimSuffix(host, ".") + "-" + port
	}
	return strings.TrimSuffix(key, ".")
}

// arg returns args[i], "" when there are fewer: a placeholder left empty
// is an argument not given.
func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

// inBlock reports whether zone is one of the block's keys or below one.
func inBlock(zone string, keys []string) bool {
	for _, k := range plugin.OriginsFromArgsOrServerBlock(nil, keys) {
		if plugin.Name(k).Matches(zone) {
			return true
		}
	}
	return false
}
