package rrl

import (
	"encoding/binary"
	"hash/maphash"
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
// family, the class, and the name (case-folded) and type, with hash/maphash
// under seed. Like BIND, it keeps a hash, not the name: a collision merely
// shares an account, which a client could reach as well by asking for the
// other name from the same network. seed, chosen at random at start-up,
// keeps the hashes, and so the table's slots, unpredictable to clients.
//
// The bytes are hashed from a buffer on the stack; a name too long for it
// (rare: names of over 100 characters) is hashed block by block, each block
// led by the hash of the blocks before it.
func accountKey(seed maphash.Seed, prefix netip.Addr, c class, name string, qtype uint16) uint64 {
	var buf [128]byte
	a := prefix.As16()
	n := copy(buf[:], a[:])
	buf[n], buf[n+1], buf[n+2], buf[n+3] = byte(prefix.BitLen()), byte(c), byte(qtype>>8), byte(qtype)
	n += 4
	for {
		k := copy(buf[n:], name)
		for i, b := range buf[n : n+k] {
			if 'A' <= b && b <= 'Z' {
				buf[n+i] = b + 'a' - 'A'
			}
		}
		h := maphash.Bytes(seed, buf[:n+k])
		if name = name[k:]; name == "" {
			return h
		}
		n = 8
		binary.LittleEndian.PutUint64(buf[:n], h)
	}
}
