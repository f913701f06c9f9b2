// Package viewcheck tells whether a reply of globaladdr's external view shows
// what it must never show: an internal address, a hidden name, or an
// external-dns ownership record; the plugin's fuzz test and the end-to-end
// tests judge every reply with it. It must share nothing with the plugin's
// code, so that a mistake there is not repeated here.
//
// It is written from the specification (DESIGN.md): names are compared label
// by label in wire form, addresses with net/netip, and it keeps its own table
// of the names and addresses in record data.
package viewcheck

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// DefaultInternal are the ranges globaladdr counts as internal when its
// Corefile names none.
var DefaultInternal = MustPrefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
	"127.0.0.0/8", "169.254.0.0/16", "fc00::/7", "fe80::/10", "::1/128")

// Policy is what one external view must not show.
type Policy struct {
	// Internal holds the internal ranges and the sources of the maps.
	Internal []netip.Prefix
	// Hide holds the hidden names.
	Hide []string
	// KeepRegistry lets ownership records through.
	KeepRegistry bool
}

// MustPrefixes parses addresses and prefixes; an address is a prefix of its
// full length. It panics on anything else.
func MustPrefixes(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s {
		if !strings.Contains(p, "/") {
			a := netip.MustParseAddr(p)
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}

// Check returns an error naming the first record of m, in any section, that
// the view must not show: an internal address anywhere in a record's data
// (A, AAAA, SVCB and HTTPS hints, AMTRELAY and IPSECKEY gateways, L32, L64,
// APL: every field Rdata lists; an IPv4-mapped IPv6 address is judged by its
// IPv4 address too; a prefix by any address in it), a malformed one, a
// record owned by a hidden name or naming one in its data, or an ownership
// TXT record unless KeepRegistry.
func (p *Policy) Check(m *dns.Msg) error {
	for _, section := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section {
			if err := p.CheckRR(rr); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckRR is Check for one record. The OPT pseudo-record is never a leak.
func (p *Policy) CheckRR(rr dns.RR) error {
	if rr.Header().Rrtype == dns.TypeOPT {
		return nil
	}
	if p.Hidden(rr.Header().Name) {
		return fmt.Errorf("hidden owner: %s", rr)
	}
	for _, n := range Names(rr) {
		if p.Hidden(n) {
			return fmt.Errorf("hidden name in data: %s", rr)
		}
	}
	addrs, err := Addrs(rr)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if p.internalPrefix(a) {
			return fmt.Errorf("internal address: %s", rr)
		}
	}
	if t, ok := rr.(*dns.TXT); ok && !p.KeepRegistry && Ownership(t) {
		return fmt.Errorf("ownership record: %s", rr)
	}
	return nil
}

// internalPrefix reports whether an address of pr is internal.
func (p *Policy) internalPrefix(pr netip.Prefix) bool {
	if pr.IsSingleIP() {
		return p.IsInternal(pr.Addr())
	}
	for _, in := range p.Internal {
		if in.Overlaps(pr) {
			return true
		}
	}
	return false
}

// IsInternal reports whether a is in an internal range.
func (p *Policy) IsInternal(a netip.Addr) bool {
	for _, pr := range p.Internal {
		if pr.Contains(a) || a.Is4In6() && pr.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// Hidden reports whether name is a hidden name or below one, or the
// reverse-mapping name (in-addr.arpa, ip6.arpa) of an internal address or
// of a prefix of internal addresses only, or below one. The name of an ACME
// challenge (its first label _acme-challenge) is shown, wherever it is.
func (p *Policy) Hidden(name string) bool {
	l := Labels(name)
	if len(l) > 0 && strings.EqualFold(l[0], "_acme-challenge") {
		return false
	}
	for _, h := range p.Hide {
		hl := Labels(h)
		if len(hl) <= len(l) && equalFold(hl, l[len(l)-len(hl):]) {
			return true
		}
	}
	pr, ok := reverse(l)
	if !ok {
		return false
	}
	for _, in := range p.Internal {
		if in.Bits() <= pr.Bits() && in.Contains(pr.Addr()) {
			return true
		}
	}
	return false
}

// reverse reads the prefix a reverse-mapping name stands for, from its
// labels: decimal octets before in-addr.arpa, hexadecimal nibbles before
// ip6.arpa, as many as there are from the right.
func reverse(labels []string) (netip.Prefix, bool) {
	n := len(labels)
	if n < 3 || !strings.EqualFold(labels[n-1], "arpa") {
		return netip.Prefix{}, false
	}
	var digits []uint64
	switch strings.ToLower(labels[n-2]) {
	case "in-addr":
		for i := n - 3; i >= 0 && len(digits) < 4; i-- {
			v, err := strconv.ParseUint(labels[i], 10, 8)
			if err != nil || len(labels[i]) > 1 && labels[i][0] == '0' {
				break
			}
			digits = append(digits, v)
		}
		if len(digits) == 0 {
			return netip.Prefix{}, false
		}
		var b [4]byte
		for i, d := range digits {
			b[i] = byte(d)
		}
		return netip.PrefixFrom(netip.AddrFrom4(b), 8*len(digits)), true
	case "ip6":
		for i := n - 3; i >= 0 && len(digits) < 32; i-- {
			v, err := strconv.ParseUint(labels[i], 16, 8)
			if err != nil || len(labels[i]) != 1 {
				break
			}
			digits = append(digits, v)
		}
		if len(digits) == 0 {
			return netip.Prefix{}, false
		}
		var b [16]byte
		for i, d := range digits {
			b[i/2] |= byte(d) << (4 * (1 - i%2))
		}
		return netip.PrefixFrom(netip.AddrFrom16(b), 4*len(digits)), true
	}
	return netip.Prefix{}, false
}

// Ownership reports whether t is an external-dns ownership record: its text
// begins with external-dns's heritage marker, with or without the quotes the
// etcd plugin serves external-dns's text with.
func Ownership(t *dns.TXT) bool {
	return len(t.Txt) > 0 && strings.HasPrefix(strings.TrimLeft(t.Txt[0], `\"`), "heritage=external-dns")
}

// Labels returns the labels of name in wire form (escapes resolved), or nil
// for a name that does not pack.
func Labels(name string) []string {
	buf := make([]byte, 256)
	n, err := dns.PackDomainName(dns.Fqdn(name), buf, 0, nil, false)
	if err != nil {
		return nil
	}
	var out []string
	for i := 0; i < n && buf[i] != 0; i += int(buf[i]) + 1 {
		out = append(out, string(buf[i+1:i+1+int(buf[i])]))
	}
	return out
}

// equalFold compares labels, ignoring ASCII case.
func equalFold(a, b []string) bool {
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}
