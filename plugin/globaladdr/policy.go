package globaladdr

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

// policy is the parsed configuration of one globaladdr instance: what counts
// as internal, what it becomes, and which names and records the external view
// does not show. It is read-only once built.
type policy struct {
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
func (p *policy) judge(rr dns.RR) action {
	if p.hidden(rr.Header().Name) {
		return dropHidden
	}
	var names [2]string
	for _, name := range dataNames(rr, &names) {
		if p.hidden(name) {
			return dropHidden
		}
	}
	switch rr := rr.(type) {
	case *dns.A:
		return p.judgeAddr(rr.A, true)
	case *dns.AAAA:
		return p.judgeAddr(rr.AAAA, false)
	case *dns.TXT:
		if !p.keepRegistry && isRegistry(rr) {
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

// hidden reports whether name does not exist outside: it is at or below a
// hidden name, or it is the reverse-mapping name of an internal address. An
// ACME challenge's name (_acme-challenge.NAME) is never hidden: a CA must
// read the challenge of a hidden name too, and what it holds, a token, is
// public (the certificate's names are, in Certificate Transparency logs).
func (p *policy) hidden(name string) bool {
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

// exposes reports whether the view shows the records of name, marked m (by
// external-dns's webhook intake; see horizon.Mark), at all: never when marked
// withheld, and, with expose marked, only when marked exposed. An ACME
// challenge's name is shown whatever its mark, as hidden says.
func (p *policy) exposes(name string, m horizon.Mark) bool {
	switch {
	case dnsname.IsChallenge(name):
		return true
	case m == horizon.Withheld:
		return false
	}
	return m == horizon.Exposed || !p.onlyMarked
}

// unmarked reports whether name is not shown because no backend marks its
// records (expose marked; an answer not from an etcdzone zone has no mark).
func (p *policy) unmarked(name string) bool {
	return p.onlyMarked && name != "" && !dnsname.IsChallenge(name)
}

// internalReverse reports whether name is the reverse-mapping name of an
// internal address, or lies below the reverse name of a prefix whose
// addresses are all internal (51.0.168.192.in-addr.arpa,
// 0.168.192.in-addr.arpa, and RFC 2317's 0/25.0.168.192.in-addr.arpa): the
// name itself tells an internal address. It does not allocate.
func (p *policy) internalReverse(name string) bool {
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
func (p *policy) judgeAddr(ip net.IP, v4 bool) action {
	a, ok := addrOf(ip, v4)
	switch {
	case !ok:
		return dropAddr
	case p.isInternal(a):
		return rewriteAddr
	}
	return keep
}

// isInternal reports whether a is internal: inside an internal range or a map
// source. An IPv4-mapped IPv6 address is judged by its IPv4 address too.
func (p *policy) isInternal(a netip.Addr) bool {
	if p.lookupMap(a) >= 0 || slices.ContainsFunc(p.internal, func(pr netip.Prefix) bool { return pr.Contains(a) }) {
		return true
	}
	return a.Is4In6() && p.isInternal(a.Unmap())
}

// lookupMap returns the index in p.maps of the most specific mapping of a,
// or -1.
func (p *policy) lookupMap(a netip.Addr) int {
	for i := range p.maps {
		if p.maps[i].from.Contains(a) {
			return i
		}
	}
	return -1
}

// targets returns what each of p's maps translates into now, in p's order
// (mapping.target): the maps of a new state of the global addresses.
func (p *policy) targets() []netip.Prefix {
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

// isRegistry reports whether t is an external-dns ownership record. The
// etcd plugin serves external-dns's text with its surrounding quotes, which
// miekg/dns keeps escaped (\") in a record read from the wire.
func isRegistry(t *dns.TXT) bool {
	if len(t.Txt) == 0 {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(t.Txt[0], `\"`), registryPrefix)
}

// judgeHints returns rewriteHints when a hint address of s is internal or
// malformed.
func (p *policy) judgeHints(s *dns.SVCB) action {
	for _, kv := range s.Value {
		ips, v4 := hint(kv)
		if ips == nil {
			continue
		}
		for _, ip := range *ips {
			if a, ok := addrOf(ip, v4); !ok || p.isInternal(a) {
				return rewriteHints
			}
		}
	}
	return keep
}

// internalData reports whether pr, an address or prefix in the data of a
// record that can't be rewritten, is internal or malformed (the zero
// Prefix).
func (p *policy) internalData(pr netip.Prefix) bool {
	if !pr.IsValid() {
		return true
	}
	if pr.IsSingleIP() {
		return p.isInternal(pr.Addr())
	}
	return p.overlapsInternal(pr)
}

// overlapsInternal reports whether any address of pr is internal.
func (p *policy) overlapsInternal(pr netip.Prefix) bool {
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

// rules returns, in lines of text, what the view does at addrs, a known
// state of the global addresses: horizon.State.Rules. A map's prefix learned
// from a source is the one addrs holds.
func (p *policy) rules(addrs *globals) string {
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
