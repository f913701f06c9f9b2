// Package horizon is the contract between a plugin that makes a view of a
// split-horizon zone (globaladdr makes the external one) and a backend that
// holds its zones in memory (etcdzone): the backend builds each zone as the
// view shows it, once per change, and the view passes the backend's answers
// and transfers through untouched. Both plugins import this package, so the
// compiler checks that they agree; the view reads no backend's data. (It is
// no plugin, and has nothing to do with CoreDNS's view plugin, which picks
// a server block by the query.)
package horizon

import (
	"context"

	"github.com/coredns/coredns/plugin"

	"github.com/miekg/dns"
)

// View is a view that a backend builds its zones with.
type View interface {
	// Current returns the view's judging at its present state, nil while
	// the view can't judge yet (its global addresses are not known): the
	// backend serves nothing meanwhile.
	Current() *State
	// Subscribe registers f to be called each time Current changes. f is
	// called on the goroutine that changed it, and must return at once
	// (signal a channel, say). unsubscribe removes it.
	Subscribe(f func()) (unsubscribe func())
	// Serve tells the view that the backend answers the zones (and the
	// names below them) as the view shows them: the view passes their
	// answers and transfers through untouched, until undo is called.
	Serve(zones []string) (undo func())
	// Judged tells the view the records of a question's name and type, as
	// the backend holds them, that the zone it answered from shows
	// otherwise (rewritten, or left out), and the name's place, so that the
	// view counts them as it counts what it changes in the answers it
	// rewrites itself.
	Judged(ctx context.Context, rrs []dns.RR, at Place)
	// Fallthrough serves r, a question for a name of one of the zones the
	// backend serves that the backend's zone does not hold and leaves to
	// next, the plugins after it (its fallthrough), as the view serves the
	// questions of the block's other backends: a hidden name is answered
	// NXDOMAIN without asking next, and next's answer is judged on its
	// way up. The backend calls it in place of next.ServeDNS.
	Fallthrough(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, next plugin.Handler) (int, error)
}

// State is one state of a view, never changed once made: it shows records
// as the view was when it was made (its global addresses, the prefixes its
// maps learned), whatever the view learns later, which makes a new State.
type State struct {
	// Show returns what the view shows of rrs, the records of one owner
	// name: none when it shows none of them, rrs itself when it shows
	// them all as they are, else new records in a slice of their own,
	// which the caller may keep and reorder (rrs is never modified). Its
	// RRsets are whole: each has one TTL, and no record twice.
	Show func(rrs []dns.RR) []dns.RR
	// ShowAt is Show for the records of a name of a zone the backend
	// builds, which a view may show otherwise by the name's place: its
	// route, and whether it may be an alias; nil: Show.
	ShowAt func(rrs []dns.RR, at Place) []dns.RR
	// Tunnel is the host name that the view's own CNAMEs lead to (see
	// outside.Policy.ShowOwner), "" for none. A backend does not chase
	// it: a resolver outside does, and no answer of ours is mixed into
	// the tunnel's.
	Tunnel string
	// Revision is the etcd revision at which the state's global
	// addresses were written, 0 when they do not come from etcd: a part
	// of a zone's serial.
	Revision int64
	// Rules says, in lines of text, what Show does: the view's rules and
	// the global addresses it uses. Two states with the same Rules show
	// every record alike; a zone's stamp holds them (see package
	// etcdzone/stamp), so that a zone shown otherwise gets a new serial.
	Rules string
	// Exposes reports whether the view shows the records of the owner
	// name, whose records are marked m (see Mark), at all; Show then
	// decides record by record. Nil: Shows's default.
	Exposes func(name string, m Mark) bool
}

// ShowOwner returns what s shows of rrs, the records of one owner name at
// at: by ShowAt, when s has one, else by Show.
func (s *State) ShowOwner(rrs []dns.RR, at Place) []dns.RR {
	if s.ShowAt != nil {
		return s.ShowAt(rrs, at)
	}
	return s.Show(rrs)
}

// Shows reports whether the view shows the records of name, marked m, at
// all: by Exposes, or, when it is nil, unless they are marked Withheld.
func (s *State) Shows(name string, m Mark) bool {
	if s.Exposes == nil {
		return m != Withheld
	}
	return s.Exposes(name, m)
}

// Mark is what the records of one owner name say of their place in the
// external view: external-dns's webhook intake stores the ProviderSpecific
// property MarkProperty of an endpoint (the annotation
// external-dns.kubernetes.io/webhook-globaladdr-external on its Ingress or
// Service; a DNSEndpoint, whose annotations external-dns does not read,
// gives the property in the endpoint's providerSpecific) in each etcd value
// it writes, under MarkField; a backend gives the view the mark of each
// owner name's records.
type Mark uint8

const (
	// Unmarked records say nothing: they are shown unless the view shows
	// only marked names.
	Unmarked Mark = iota
	// Exposed records are marked "true".
	Exposed
	// Withheld records are marked "false", or with a value that is neither
	// "true" nor "false": the view never shows them.
	Withheld
)

const (
	// MarkProperty is the ProviderSpecific property of an external-dns
	// endpoint that marks it.
	MarkProperty = "webhook/globaladdr-external"
	// MarkField is the field of a SkyDNS value in etcd that holds the
	// mark, as MarkProperty's value.
	MarkField = "globaladdr-external"
)

// ParseMark returns the mark a value of MarkField or MarkProperty makes;
// ok is false for a value that is neither "true" nor "false" (Withheld:
// fail closed), for the caller to log.
func ParseMark(value string) (m Mark, ok bool) {
	switch value {
	case "true":
		return Exposed, true
	case "false":
		return Withheld, true
	}
	return Withheld, false
}

// Join returns the mark of a name whose records are marked m and n: one
// record Withheld withholds the name, and one Unmarked leaves it unmarked.
func Join(m, n Mark) Mark {
	switch {
	case m == Withheld || n == Withheld:
		return Withheld
	case m == Unmarked || n == Unmarked:
		return Unmarked
	}
	return Exposed
}

// Backend is a backend that builds its zones with the block's view, asked
// before it starts which zones those are: the view judges the answers of
// the block's other backends, such as the etcd plugin's, for the names
// outside them.
type Backend interface {
	// ServedZones returns the zones the backend serves as the view shows
	// them once started, lower case and fully qualified.
	ServedZones() []string
}

// Of returns the view among a server block's plugins, nil when the block
// has none.
func Of(handlers []plugin.Handler) View {
	for _, h := range handlers {
		if v, ok := h.(View); ok {
			return v
		}
	}
	return nil
}
