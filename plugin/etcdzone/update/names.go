package update

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"github.com/miekg/dns"
)

// Entry is one etcd key of the names an UPDATE reads: as stored, or as the
// UPDATE writes it.
type Entry struct {
	Key   string
	Owner string
	RRs   []dns.RR
	// Value is what an UPDATE writes into the key, with the update's lease
	// when Lease is set; nil for a key as stored.
	Value []byte
	Lease bool
}

// names are the records of the names an UPDATE reads or writes, by their
// etcd keys, as they stand and as the UPDATE changes them.
type names struct {
	entries []*Entry
}

// at returns the entries of name.
func (n *names) at(name string) []*Entry {
	var out []*Entry
	for _, e := range n.entries {
		if e.Owner == name {
			out = append(out, e)
		}
	}
	return out
}

// rrset returns name's records of type t.
func (n *names) rrset(name string, t uint16) []dns.RR {
	var out []dns.RR
	for _, e := range n.at(name) {
		for _, rr := range e.RRs {
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
		value, ok := zone.Encode(c.rr)
		if !ok {
			return dns.RcodeRefused
		}
		n.entries = append(n.entries, &Entry{Key: path + "/" + label(c.rr), Owner: c.name, RRs: []dns.RR{c.rr}, Value: value, Lease: lease})
	case opDeleteName:
		n.entries = slices.DeleteFunc(n.entries, func(e *Entry) bool { return e.Owner == c.name })
	case opDeleteRRset, opDeleteRR:
		goes := func(rr dns.RR) bool {
			return rr.Header().Rrtype == c.rrtype && (c.op == opDeleteRRset || dns.IsDuplicate(rr, c.rr))
		}
		kept := n.entries[:0:0]
		for _, e := range n.entries {
			left := len(e.RRs)
			if e.Owner == c.name {
				left = len(slices.DeleteFunc(slices.Clone(e.RRs), goes))
			}
			switch {
			case left == len(e.RRs):
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
