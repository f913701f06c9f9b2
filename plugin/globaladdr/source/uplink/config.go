package uplink

import (
	"cmp"
	"regexp"
	"strconv"

	"github.com/coredns/caddy"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// The holds without a failover or failback line, in rounds of an uplink's
// probes (its check's, else its from lines'): at every 2s, an uplink whose
// probes fail is down within 3 rounds (6 to 10 s, as a probe may take up to
// every), and one that comes back is served after 10 s of good rounds.
const (
	defaultFailover = 3
	defaultFailback = 5
)

// maxHold bounds failover and failback.
const maxHold = 1000

// namePattern is what an uplink's name may be: a metric label, a mark's
// value, a word of the log.
var namePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,30}[a-z0-9])?$`)

// Config is a block's uplink lines (those of the uplinks themselves; their
// from and static lines are the source package's to read) and its failover
// and failback holds. Its zero value has no uplink.
type Config struct {
	uplinks            []*Uplink
	failover, failback int // 0 until given
	// holdAt is the error for a hold given without an uplink line.
	holdAt error
}

// Named returns the uplink of the line "uplink NAME ..." (args[0] is NAME),
// new at its first line; it fails for a NAME that is not one.
func (cfg *Config) Named(c *caddy.Controller, name string) (*Uplink, error) {
	if !namePattern.MatchString(name) {
		return nil, c.Errf("uplink %q: a name is 1 to 32 lower-case letters, digits, '-' or '_', starting and ending with a letter or digit", name)
	}
	for _, u := range cfg.uplinks {
		if u.Name == name {
			return u, nil
		}
	}
	u := &Uplink{Name: name, Priority: DefaultPriority}
	cfg.uplinks = append(cfg.uplinks, u)
	return u, nil
}

// Uplinks returns the block's uplinks, in the order their first lines came.
func (cfg *Config) Uplinks() []*Uplink { return cfg.uplinks }

// ParseHold reads "failover after ROUNDS" or "failback after ROUNDS"
// (property, args).
func (cfg *Config) ParseHold(c *caddy.Controller, property string, args []string) error {
	if len(args) != 2 || args[0] != "after" {
		return c.Errf("%s needs after ROUNDS (%s after 3), after %q", property, property, c.Val())
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 1 || n > maxHold {
		return c.Errf("%s after %q: ROUNDS is a number of rounds from 1 to %d", property, args[1], maxHold)
	}
	hold := &cfg.failover
	if property == "failback" {
		hold = &cfg.failback
	}
	if *hold != 0 {
		return c.Errf("%s is given twice", property)
	}
	*hold = n
	cfg.holdAt = c.Errf("%q is for the uplinks, and there is no uplink line", property)
	return nil
}

// Parse reads the property of a line "uplink NAME PROPERTY ARGS..." that
// is u's own: via ADDRESS|INTERFACE, check KIND TARGET or priority N.
func Parse(c *caddy.Controller, u *Uplink, property string, args []string) error {
	switch property {
	case "via":
		if len(args) != 1 {
			return c.Errf("uplink %s via needs one local ADDRESS or INTERFACE, after %q", u.Name, c.Val())
		}
		if u.Via.String() != "" {
			return c.Errf("uplink %s: via is given twice", u.Name)
		}
		u.Via = probe.ParseVia(args[0])
	case "check":
		if u.Check != nil {
			return c.Errf("uplink %s: check is given twice", u.Name)
		}
		ch, err := probe.ParseCheck(c, args)
		if err != nil {
			return err
		}
		u.Check = ch
	case "priority":
		if len(args) != 1 {
			return c.Errf("uplink %s priority needs one N, after %q", u.Name, c.Val())
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > 100 {
			return c.Errf("uplink %s priority %q: N is a number from 1 (first) to 100", u.Name, args[0])
		}
		if u.priority {
			return c.Errf("uplink %s: priority is given twice", u.Name)
		}
		u.Priority, u.priority = n, true
	default:
		return c.Errf("uplink %s: unknown property %q: want from, static, via, check or priority", u.Name, property)
	}
	return nil
}

// Finish gives every uplink the block's holds. It fails for a hold given
// with no uplink line.
func (cfg *Config) Finish() error {
	if len(cfg.uplinks) == 0 && cfg.holdAt != nil {
		return cfg.holdAt
	}
	for _, u := range cfg.uplinks {
		u.failover = cmp.Or(cfg.failover, defaultFailover)
		u.failback = cmp.Or(cfg.failback, defaultFailback)
	}
	return nil
}

// Route gives u's Via to ps, the Probers of its from lines, and to its
// check.
func (u *Uplink) Route(ps []probe.Prober) {
	for _, p := range ps {
		if r, ok := p.(probe.Routed); ok {
			r.RouteVia(u.Via)
		}
	}
	if r, ok := u.Check.(probe.Routed); ok {
		r.RouteVia(u.Via)
	}
}
