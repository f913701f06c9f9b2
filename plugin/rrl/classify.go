package rrl

import (
	"net/netip"

	"github.com/miekg/dns"
)

// class is a kind of response, each with its own rate.
type class uint8

const (
	classResponse class = iota // an answer: accounted per name and type
	classNodata                // NOERROR without an answer: per name
	classNxdomain              // NXDOMAIN: per zone
	classReferral              // a delegation: per delegated name
	classError                 // any other rcode: one account per client prefix
	classAll                   // every response: one account per client prefix
	classes
)

// classNames are the classes as the metrics' class label and the logs name
// them.
var classNames = [classes]string{"response", "nodata", "nxdomain", "referral", "error", "all"}

func (c class) String() string { return classNames[c] }

// classify returns the class of res and the name it is accounted under
// (empty for errors), as BIND does: an answer by its name and type, NODATA
// by its name, NXDOMAIN by the zone (the SOA's owner), a referral by the
// delegated name.
func classify(res *dns.Msg) (c class, name string, qtype uint16) {
	if len(res.Question) == 0 {
		return classError, "", 0
	}
	q := res.Question[0]
	switch res.Rcode {
	case dns.RcodeSuccess:
		if len(res.Answer) > 0 {
			return classResponse, q.Name, q.Qtype
		}
		if ns := delegation(res); ns != "" {
			return classReferral, ns, 0
		}
		return classNodata, q.Name, 0
	case dns.RcodeNameError:
		if soa := soaOwner(res.Ns); soa != "" {
			return classNxdomain, soa, 0
		}
		return classNxdomain, q.Name, 0
	}
	return classError, "", 0
}

// delegation returns the owner of the NS records of a referral: a
// non-authoritative reply with NS and no SOA in its authority section.
func delegation(res *dns.Msg) string {
	if res.Authoritative || soaOwner(res.Ns) != "" {
		return ""
	}
	for _, rr := range res.Ns {
		if rr.Header().Rrtype == dns.TypeNS {
			return rr.Header().Name
		}
	}
	return ""
}

func soaOwner(rrs []dns.RR) string {
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeSOA {
			return rr.Header().Name
		}
	}
	return ""
}

// accountKey hashes what identifies an account: the client's prefix and its
// family, the class, and the name (case-folded) and type, with FNV-1a from
// seed and a final mix. Like BIND, it keeps a hash, not the name: a
// collision merely shares an account, which a client could reach as well by
// asking for the other name from the same network. seed, chosen at random,
// keeps the hashes, and so the table's slots, unpredictable to clients.
func accountKey(seed uint64, prefix netip.Addr, c class, name string, qtype uint16) uint64 {
	const prime = 1099511628211
	h := seed
	a := prefix.As16()
	for _, b := range a {
		h = (h ^ uint64(b)) * prime
	}
	for _, b := range [4]byte{byte(prefix.BitLen()), byte(c), byte(qtype >> 8), byte(qtype)} {
		h = (h ^ uint64(b)) * prime
	}
	for i := 0; i < len(name); i++ {
		b := name[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		h = (h ^ uint64(b)) * prime
	}
	// The finalizer of MurmurHash3: every bit of h reaches the low bits,
	// which pick the slot.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
