// Package outside is what the outside may see of a record, a section, a
// message: the policy of one external view (what counts as internal, what
// it becomes, which names and records it does not show) and its rewrite,
// at one state of the global addresses. It reads nothing: the plugin hands
// it the records, the addresses and the counts to keep.
package outside

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// Policy is what the external view shows of records: what counts as
// internal, what it becomes, and which names and records it does not show.
// It is read-only once made (New).
type Policy struct {
	internal []netip.Prefix
	// maps is ordered most specific first.
	maps []mapping
	// ttl of rewritten records; negative keeps the backend's.
	ttl int64
	// hide holds lower-case FQDNs.
	hide         []string
	keepRegistry bool
	// onlyMarked shows only the names marked exposed (expose marked).
	onlyMarked bool
	// tunnel is the host name, a lower-case FQDN, that the names with an
	// internal address stand for as CNAMEs; "" for none (tunnel.go).
	// tunnelMarked takes only the names routed through it by their mark.
	tunnel       string
	tunnelMarked bool
}

// Options are the properties a policy is made of, as the Corefile gives
// them.
type Options struct {
	// Internal lists the ranges that count as internal; nil: the default
	// ones (RFC 1918, shared address space, loopback, link-local, unique
	// local).
	Internal []netip.Prefix
	// Maps are the map properties, in any order.
	Maps []Map
	// TTL is the TTL of rewritten records; negative keeps the backend's.
	TTL int64
	// Hide lists the hidden names, lower-case FQDNs: each with every name
	// below it.
	Hide []string
	// KeepRegistry keeps external-dns's ownership records (keep_registry).
	KeepRegistry bool
	// OnlyMarked shows only the names marked exposed (expose marked).
	OnlyMarked bool
	// Tunnel is the host name, a lower-case FQDN outside the view's zones,
	// of a tunnel or relay: a name whose addresses the view would rewrite
	// stands for it as a CNAME (ShowOwner); "" for none.
	Tunnel string
	// TunnelMarked takes through the tunnel only the names whose mark
	// routes them through it (horizon.TunnelRoute); without it, every name
	// but those routed by address.
	TunnelMarked bool
}

// Map is one map property: the addresses in From become To, or the prefix
// Learned gives when it is set. A single-address To takes everything; a
// prefix keeps the host bits of the address.
type Map struct {
	// From is the internal prefix the map takes; To its global prefix, or
	// the zero Prefix when Learned gives it.
	From, To netip.Prefix
	// Learned gives the prefix of "map FROM from SOURCE", the zero Prefix
	// while the source has given none; nil when the Corefile gives To.
	Learned interface{ Load() (netip.Prefix, bool) }
}

// defaultInternal lists the ranges that count as internal when Options
// gives none: RFC 1918, shared address space (RFC 6598), loopback,
// link-local, unique local and the IPv6 loopback.
var defaultInternal = []string{
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
	"127.0.0.0/8", "169.254.0.0/16", "fc00::/7", "fe80::/10", "::1/128",
}

// New returns the policy of o.
func New(o Options) *Policy {
	p := &Policy{internal: o.Internal, ttl: o.TTL, hide: o.Hide, keepRegistry: o.KeepRegistry, onlyMarked: o.OnlyMarked, tunnel: o.Tunnel, tunnelMarked: o.TunnelMarked}
	if p.internal == nil {
		for _, s := range defaultInternal {
			p.internal = append(p.internal, netip.MustParsePrefix(s))
		}
	}
	for _, m := range o.Maps {
		p.maps = append(p.maps, newMapping(m))
	}
	slices.SortStableFunc(p.maps, func(a, b mapping) int { return b.from.Bits() - a.from.Bits() })
	return p
}

// action is what the external view does with one record.
type action uint8

const (
	keep         action = iota
	rewriteAddr         // an internal A or AAAA address: replace it
	rewriteHints        // an SVCB or HTTPS hint to replace or remove
	dropAddr            // a malformed A or AAAA address: remove the record
	dropData            // an internal address in other data: remove the record
	dropHidden          // owned by or naming a hidden name
	dropRegistry        // an external-dns ownership record
)

// judge decides what becomes of rr: removed when it names a hidden name, as
// owner or in its data; then by its type, rewritten when it holds an
// internal address it can do without, and removed when it holds one it
// can't, or is an ownership record. It does not allocate.
func (p *Policy) judge(rr dns.RR) action {
	if p.Hidden(rr.Header().Name) {
		return dropHidden
	}
	var names [2]string
	for _, name := range dataNames(rr, &names) {
		if p.Hidden(name) {
			return dropHidden
		}
	}
	switch rr := rr.(type) {
	case *dns.A:
		return p.judgeAddr(rr.A, true)
	case *dns.AAAA:
		return p.judgeAddr(rr.AAAA, false)
	case *dns.TXT:
		if !p.keepRegistry && IsRegistry(rr) {
			return dropRegistry
		}
	case *dns.SVCB, *dns.HTTPS:
		return p.judgeHints(hintsOf(rr))
	case *dns.RFC3597:
		// One of a type that miekg/dns knows, which it would have parsed,
		// is removed: its data can't be judged field by field. One of a
		// type it does not know holds no field to judge, and passes.
		if _, known := dns.TypeToRR[rr.Hdr.Rrtype]; known {
			return dropData
		}
	default:
		for i := 0; ; i++ {
			pr, ok := dataPrefix(rr, i)
			if !ok {
				break
			}
			if p.internalData(pr) {
				return dropData
			}
		}
	}
	return keep
}

// Keeps reports whether the view shows rr as it is.
func (p *Policy) Keeps(rr dns.RR) bool { return p.judge(rr) == keep }

// Hidden reports whether name does not exist outside: it is at or below a
// hidden name, or it is the reverse-mapping name of an internal address. An
// ACME challenge's name (_acme-challenge.NAME) is never hidden: a CA must
// read the challenge of a hidden name too, and what it holds, a token, is
// public (the certificate's names are, in Certificate Transparency logs).
func (p *Policy) Hidden(name string) bool {
	if name == "" || dnsname.IsChallenge(name) {
		return false
	}
	for _, h := range p.hide {
		if dnsname.In(name, h) {
			return true
		}
	}
	return p.internalReverse(name)
}

// Exposes reports whether the view shows the records of name, marked m (by
// external-dns's webhook intake; see horizon.Mark), at all: never when marked
// withheld, and, with expose marked, only when marked exposed. An ACME
// challenge's name is shown whatever its mark, as Hidden says.
func (p *Policy) Exposes(name string, m horizon.Mark) bool {
	switch {
	case dnsname.IsChallenge(name):
		return true
	case m == horizon.Withheld:
		return false
	}
	return m == horizon.Exposed || !p.onlyMarked
}

// Unmarked reports whether name is not shown because no backend marks its
// records (expose marked; an answer not from an etcdzone zone has no mark).
func (p *Policy) Unmarked(name string) bool {
	return p.onlyMarked && name != "" && !dnsname.IsChallenge(name)
}

// internalReverse reports whether name is the reverse-mapping name of an
// internal address, or lies below the reverse name of a prefix whose
// addresses are all internal (51.0.168.192.in-addr.arpa,
// 0.168.192.in-addr.arpa, and RFC 2317's 0/25.0.168.192.in-addr.arpa): the
// name itself tells an internal address. It does not allocate.
func (p *Policy) internalReverse(name string) bool {
	pr, ok := reversePrefix(name)
	if !ok {
		return false
	}
	for _, in := range p.internal {
		if in.Bits() <= pr.Bits() && in.Contains(pr.Addr()) {
			return true
		}
	}
	for _, m := range p.maps {
		if m.from.Bits() <= pr.Bits() && m.from.Contains(pr.Addr()) {
			return true
		}
	}
	return false
}

// judgeAddr judges the address of an A (v4) or AAAA record.
func (p *Policy) judgeAddr(ip net.IP, v4 bool) action {
	a, ok := addrOf(ip, v4)
	switch {
	case !ok:
		return dropAddr
	case p.IsInternal(a):
		return rewriteAddr
	}
	return keep
}

// IsInternal reports whether a is internal: inside an internal range or a map
// source. An IPv4-mapped IPv6 address is judged by its IPv4 address too.
func (p *Policy) IsInternal(a netip.Addr) bool {
	if p.lookupMap(a) >= 0 || slices.ContainsFunc(p.internal, func(pr netip.Prefix) bool { return pr.Contains(a) }) {
		return true
	}
	return a.Is4In6() && p.IsInternal(a.Unmap())
}

// lookupMap returns the index in p.maps of the most specific mapping of a,
// or -1.
func (p *Policy) lookupMap(a netip.Addr) int {
	for i := range p.maps {
		if p.maps[i].from.Contains(a) {
			return i
		}
	}
	return -1
}

// targets returns what each of p's maps translates into now, in p's order
// (mapping.target): the maps of a new state of the global addresses.
func (p *Policy) targets() []netip.Prefix {
	if len(p.maps) == 0 {
		return nil
	}
	to := make([]netip.Prefix, len(p.maps))
	for i := range p.maps {
		to[i] = p.maps[i].target()
	}
	return to
}

// registryPrefix starts every ownership record of external-dns's TXT registry.
const registryPrefix = "heritage=external-dns"

// IsRegistry reports whether t is an external-dns ownership record. The
// etcd plugin serves external-dns's text with its surrounding quotes, which
// miekg/dns keeps escaped (\") in a record read from the wire.
func IsRegistry(t *dns.TXT) bool {
	if len(t.Txt) == 0 {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(t.Txt[0], `\"`), registryPrefix)
}

// judgeHints returns rewriteHints when a hint address of s is internal or
// malformed.
func (p *Policy) judgeHints(s *dns.SVCB) action {
	for _, kv := range s.Value {
		ips, v4 := hint(kv)
		if ips == nil {
			continue
		}
		for _, ip := range *ips {
			if a, ok := addrOf(ip, v4); !ok || p.IsInternal(a) {
				return rewriteHints
			}
		}
	}
	return keep
}

// internalData reports whether pr, an address or prefix in the data of a
// record that can't be rewritten, is internal or malformed (the zero
// Prefix).
func (p *Policy) internalData(pr netip.Prefix) bool {
	if !pr.IsValid() {
		return true
	}
	if pr.IsSingleIP() {
		return p.IsInternal(pr.Addr())
	}
	return p.OverlapsInternal(pr)
}

// OverlapsInternal reports whether any address of pr is internal.
func (p *Policy) OverlapsInternal(pr netip.Prefix) bool {
	for _, in := range p.internal {
		if in.Overlaps(pr) {
			return true
		}
	}
	for _, m := range p.maps {
		if m.from.Overlaps(pr) {
			return true
		}
	}
	return false
}

// Rules returns, in lines of text, what the view does at addrs, a known
// state of the global addresses: horizon.State.Rules. A map's prefix learned
// from a source is the one addrs holds.
func (p *Policy) Rules(addrs *Globals) string {
	var b strings.Builder
	fmt.Fprintf(&b, "internal %s\n", joined(p.internal))
	for i, m := range p.maps {
		to := "none yet"
		if addrs.to[i].IsValid() {
			to = addrs.to[i].String()
		}
		fmt.Fprintf(&b, "map %s %s\n", m.from, to)
	}
	if p.ttl >= 0 {
		fmt.Fprintf(&b, "ttl %d\n", p.ttl)
	}
	for _, h := range p.hide {
		fmt.Fprintf(&b, "hide %s\n", h)
	}
	if p.keepRegistry {
		b.WriteString("keep_registry\n")
	}
	if p.onlyMarked {
		b.WriteString("expose marked\n")
	}
	if p.tunnel != "" {
		fmt.Fprintf(&b, "tunnel %s", p.tunnel)
		if p.tunnelMarked {
			b.WriteString(" marked")
		}
		b.WriteString("\n")
	}
	global := append(slices.Clone(addrs.v4), addrs.v6...)
	slices.SortFunc(global, func(a, b net.IP) int { return bytes.Compare(a, b) })
	fmt.Fprintf(&b, "global %s\n", joined(global))
	return b.String()
}

// joined returns the texts of vs, separated by spaces.
func joined[T fmt.Stringer](vs []T) string {
	texts := make([]string, len(vs))
	for i, v := range vs {
		texts[i] = v.String()
	}
	return strings.Join(texts, " ")
}
