package outside

import (
	"errors"
	"net"
	"net/netip"
	"slices"
)

// errNoGlobal is returned when an internal address must be replaced by a
// global one, but no global address is known yet (a source that has not
// delivered a valid value).
var errNoGlobal = errors.New("no global address known yet")

// mapping is one map property as the policy holds it (see Map).
type mapping struct {
	from netip.Prefix
	to   netip.Prefix
	// single is to's address in the form DNS records carry, when to is a
	// single address; nil when to is a prefix to translate into.
	single net.IP
	// learned gives to for "map FROM from SOURCE"; nil when the Corefile
	// gives to.
	learned interface{ Load() (netip.Prefix, bool) }
}

// newMapping returns the mapping of m.
func newMapping(m Map) mapping {
	mp := mapping{from: m.From, to: m.To, learned: m.Learned}
	if m.Learned == nil && m.To.IsSingleIP() {
		mp.single = net.IP(m.To.Addr().AsSlice())
	}
	return mp
}

// target returns what m maps to now: its address or prefix, from the
// source that learns it if any; the zero Prefix while the source has given
// none.
func (m *mapping) target() netip.Prefix {
	if m.learned != nil {
		to, _ := m.learned.Load()
		return to
	}
	return m.to
}

// translate returns the address a maps to, a being inside m.from, when m
// maps to to (its target when the state of the global addresses at hand was
// made); nil when to is the zero Prefix, m's source having given none: a
// has nothing to become, and is dropped.
func (m *mapping) translate(a netip.Addr, to netip.Prefix) net.IP {
	if m.single != nil {
		return m.single
	}
	if !to.IsValid() {
		return nil
	}
	// Both are in 16-byte form (IPv4 mapped), on the stack: only the result
	// is allocated.
	src, dst := a.As16(), to.Addr().As16()
	bits := to.Bits() + 128 - to.Addr().BitLen()
	for i := range dst {
		switch {
		case bits >= 8:
			bits -= 8
		case bits <= 0:
			dst[i] = src[i]
		default:
			mask := byte(0xff) >> bits
			dst[i] = dst[i]&^mask | src[i]&mask
			bits = 0
		}
	}
	return append(net.IP(nil), dst[16-a.BitLen()/8:]...)
}

// Globals is one state of what internal addresses become: the global
// addresses, in the form DNS records carry them, and what each map
// translates into. It is never changed once made, a map's prefix learned
// from a source included: a new state replaces it, so that an answer, a zone
// transfer and a horizon.State are each shown with one state throughout,
// the one their Rules describe.
type Globals struct {
	v4, v6 []net.IP
	// known is false while the from sources have given no global address
	// yet: an internal address outside the maps has nothing to become yet
	// (errNoGlobal).
	known bool
	// to holds the target of each of the policy's maps, in its order, when
	// the state was made (Policy.targets).
	to []netip.Prefix
}

// Globals returns the state at addrs, which hold no duplicates, in which
// the maps translate into what they map to now.
func (p *Policy) Globals(addrs []netip.Addr) *Globals {
	g := &Globals{known: true, to: p.targets()}
	for _, a := range addrs {
		if a.Is4() {
			g.v4 = append(g.v4, net.IP(a.AsSlice()))
		} else {
			g.v6 = append(g.v6, net.IP(a.AsSlice()))
		}
	}
	return g
}

// NoGlobals returns the state in which no global address is known yet, and
// the maps translate into what they map to now.
func (p *Policy) NoGlobals() *Globals { return &Globals{to: p.targets()} }

// Retarget returns g with the maps translating into what they map to now,
// and whether that changed; g itself when it did not.
func (p *Policy) Retarget(g *Globals) (*Globals, bool) {
	to := p.targets()
	if slices.Equal(g.to, to) {
		return g, false
	}
	r := *g
	r.to = to
	return &r, true
}

// Known reports whether g knows the global addresses: a from source gave
// them, or the Corefile.
func (g *Globals) Known() bool { return g.known }

// MapsKnown reports whether every map of g has a target: a map whose
// source has given no prefix yet drops what it covers.
func (g *Globals) MapsKnown() bool {
	return !slices.ContainsFunc(g.to, func(to netip.Prefix) bool { return !to.IsValid() })
}

// Addrs returns the global addresses of g, of each family.
func (g *Globals) Addrs() (v4, v6 []net.IP) { return g.v4, g.v6 }

// family returns the global addresses of a's family.
func (g *Globals) family(a netip.Addr) []net.IP {
	if a.Is4() {
		return g.v4
	}
	return g.v6
}

// addrOf converts a record's address. ok is false for a malformed one.
func addrOf(ip net.IP, v4 bool) (a netip.Addr, ok bool) {
	a, ok = netip.AddrFromSlice(ip)
	if !ok {
		return a, false
	}
	if v4 {
		a = a.Unmap()
		return a, a.Is4()
	}
	return a, len(ip) == net.IPv6len
}

// single returns ip, a record's address, as a prefix of its full length; the
// zero Prefix when it is malformed.
func single(ip net.IP, v4 bool) netip.Prefix {
	a, ok := addrOf(ip, v4)
	if !ok {
		return netip.Prefix{}
	}
	return netip.PrefixFrom(a, a.BitLen())
}
