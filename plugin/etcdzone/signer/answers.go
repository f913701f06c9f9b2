package signer

// What an authoritative server's answers to queries with DO need beside
// RRSIGs, Denial and Cover (records.go).

import (
	"time"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// Check returns an error if o's durations, with the defaults of its zero
// fields, do not fit together: what New would refuse.
func (o Options) Check() error {
	_, err := o.withDefaults()
	return err
}

// NSEC reports whether the zone denies with NSEC records (else NSEC3).
func (s *Signer) NSEC() bool { return s.opts.NSEC }

// RRset returns name's records of type t as the signer holds them (the
// apex's DNSKEY, CDS, CDNSKEY and NSEC3PARAM among them), none if it has
// none. They are the signer's own: copy one before changing it.
func (s *Signer) RRset(name string, t uint16) []dns.RR {
	if n := s.lookup(name); n != nil {
		return n.records(t)
	}
	return nil
}

// Count returns the number of records the signer adds to the zone:
// signatures, denial records and the apex's key records.
func (s *Signer) Count() int {
	n := 0
	for _, x := range s.nodes {
		for _, r := range x.sets {
			n += len(r.sigs)
			if ownType(r.t) {
				n += len(r.rrs)
			}
		}
		if x.denial != nil {
			n += 1 + len(x.denialSigs)
		}
	}
	return n
}

// Expiry returns when the first of the zone's signatures expires; the zero
// time when there are none.
func (s *Signer) Expiry() time.Time {
	var first uint32
	for _, x := range s.nodes {
		for _, r := range x.sets {
			first = earliest(first, r.sigs)
		}
		first = earliest(first, x.denialSigs)
	}
	if first == 0 {
		return time.Time{}
	}
	return time.Unix(int64(first), 0)
}

// earliest returns the earliest of first (0: none) and the expirations of
// sigs.
func earliest(first uint32, sigs []dns.RR) uint32 {
	for _, rr := range sigs {
		if sig, ok := rr.(*dns.RRSIG); ok && (first == 0 || sig.Expiration < first) {
			first = sig.Expiration
		}
	}
	return first
}

// Encloser returns the closest encloser of name (RFC 5155): name itself
// when it exists in the zone (with records, or as an empty non-terminal),
// else its deepest ancestor that does; the apex at least. A name below a
// delegation has the delegation's name.
func (s *Signer) Encloser(name string) string {
	c, ok := canonical(name)
	if !ok || !dnsname.In(c, s.origin) {
		return s.origin
	}
	for p := c; p != s.origin; p = parent(p) {
		if n := s.nodes[p]; n != nil && (n.has() || n.below > 0) && !s.occluded(p) {
			return p
		}
	}
	return s.origin
}
