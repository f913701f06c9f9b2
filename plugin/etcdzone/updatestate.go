package etcdzone

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// entry is one etcd key of the names an UPDATE reads: as stored, or as the
// UPDATE writes it.
type entry struct {
	key   string
	owner string
	rrs   []dns.RR
	// value is what an UPDATE writes into the key, with an etcd lease when
	// lease is set; nil for a key as stored.
	value []byte
	lease bool
}

// names are the records of the names an UPDATE reads or writes, by their
// etcd keys, as they stand and as the UPDATE changes them.
type names struct {
	entries []*entry
}

// at returns the entries of name.
func (n *names) at(name string) []*entry {
	var out []*entry
	for _, e := range n.entries {
		if e.owner == name {
			out = append(out, e)
		}
	}
	return out
}

// rrset returns name's records of type t.
func (n *names) rrset(name string, t uint16) []dns.RR {
	var out []dns.RR
	for _, e := range n.at(name) {
		for _, rr := range e.rrs {
			if rr.Header().Rrtype == t {
				out = append(out, rr)
			}
		}
	}
	return out
}

// holds reports whether p holds (RFC 2136, 3.2.5); else it returns the
// rcode that says why not.
func (n *names) holds(p prerequisite) int {
	inUse := len(n.at(p.name)) > 0
	set := n.rrset(p.name, p.rrtype)
	switch {
	case p.cond == nameInUse && !inUse:
		return dns.RcodeNameError
	case p.cond == nameNotInUse && inUse:
		return dns.RcodeYXDomain
	case p.cond == rrsetExists && len(set) == 0:
		return dns.RcodeNXRrset
	case p.cond == rrsetAbsent && len(set) > 0:
		return dns.RcodeYXRrset
	case p.cond == rrsetEquals && !sameSet(set, p.rrs):
		return dns.RcodeNXRrset
	}
	return dns.RcodeSuccess
}

// sameSet reports whether a and b hold the same records, TTLs aside.
func sameSet(a, b []dns.RR) bool {
	in := func(rr dns.RR, set []dns.RR) bool {
		return slices.ContainsFunc(set, func(o dns.RR) bool { return dns.IsDuplicate(o, rr) })
	}
	for _, rr := range a {
		if !in(rr, b) {
			return false
		}
	}
	for _, rr := range b {
		if !in(rr, a) {
			return false
		}
	}
	return true
}

// change applies c to n (RFC 2136, 3.4.2): adds the record under a key of
// its own, below the name's etcd path prefix, with a lease when lease is
// set; or removes the keys whose records go. A key that holds records of
// several types (a text beside a host) can't lose one type alone: it
// returns REFUSED then.
func (n *names) change(c change, path string, lease bool) int {
	switch c.op {
	case opAdd:
		if slices.ContainsFunc(n.rrset(c.name, c.rrtype), func(o dns.RR) bool { return dns.IsDuplicate(o, c.rr) }) {
			return dns.RcodeSuccess // RFC 2136, 3.4.2.2: a duplicate is ignored
		}
		value, ok := storedValue(c.rr)
		if !ok {
			return dns.RcodeRefused
		}
		n.entries = append(n.entries, &entry{key: path + "/" + label(c.rr), owner: c.name, rrs: []dns.RR{c.rr}, value: value, lease: lease})
	case opDeleteName:
		n.entries = slices.DeleteFunc(n.entries, func(e *entry) bool { return e.owner == c.name })
	case opDeleteRRset, opDeleteRR:
		goes := func(rr dns.RR) bool {
			return rr.Header().Rrtype == c.rrtype && (c.op == opDeleteRRset || dns.IsDuplicate(rr, c.rr))
		}
		kept := n.entries[:0:0]
		for _, e := range n.entries {
			left := len(e.rrs)
			if e.owner == c.name {
				left = len(slices.DeleteFunc(slices.Clone(e.rrs), goes))
			}
			switch {
			case left == len(e.rrs):
				kept = append(kept, e)
			case left > 0:
				return dns.RcodeRefused
			}
		}
		n.entries = kept
	}
	return dns.RcodeSuccess
}

// label returns the label of the etcd key an UPDATE writes rr under: one
// derived from its type and data, so that a record is written once, and a
// deletion of it finds it.
func label(rr dns.RR) string {
	data := strings.TrimPrefix(rr.String(), rr.Header().String())
	sum := sha256.Sum256([]byte(dns.TypeToString[rr.Header().Rrtype] + " " + data))
	return "u" + hex.EncodeToString(sum[:8])
}

// storedValue returns the SkyDNS value that holds rr, as external-dns writes
// one (targetstrip 1: the key's last label is not part of the name), and
// whether rr can be held: an A, AAAA or CNAME record, or a TXT record of one
// string of under 255 bytes, as the etcd plugin reads it back.
func storedValue(rr dns.RR) ([]byte, bool) {
	s := struct {
		Host        string `json:"host,omitempty"`
		Text        string `json:"text,omitempty"`
		TTL         uint32 `json:"ttl,omitempty"`
		TargetStrip int    `json:"targetstrip"`
	}{TTL: rr.Header().Ttl, TargetStrip: 1}
	switch rr := rr.(type) {
	case *dns.A:
		s.Host = net.IP(rr.A).String()
	case *dns.AAAA:
		s.Host = net.IP(rr.AAAA).String()
	case *dns.CNAME:
		s.Host = strings.TrimSuffix(rr.Target, ".")
	case *dns.TXT:
		if len(rr.Txt) != 1 || len(rr.Txt[0]) == 0 || len(rr.Txt[0]) >= 255 {
			return nil, false
		}
		s.Text = rr.Txt[0]
	default:
		return nil, false
	}
	value, err := json.Marshal(s)
	return value, err == nil
}
