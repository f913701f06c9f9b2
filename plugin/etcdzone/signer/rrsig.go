package signer

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/miekg/dns"
)

// sign returns the RRSIGs of set by each of keys, valid from an hour ago
// until Validity from now, less a random part of Jitter.
func (s *Signer) sign(set []dns.RR, keys []*keyState, now time.Time) []dns.RR {
	var sigs []dns.RR
	for _, k := range keys {
		expire := now.Add(s.opts.Validity)
		if s.opts.Jitter > 0 {
			expire = expire.Add(-rand.N(s.opts.Jitter))
		}
		sig := &dns.RRSIG{
			Hdr:        dns.RR_Header{Ttl: set[0].Header().Ttl},
			Algorithm:  k.DNSKEY.Algorithm,
			SignerName: s.origin,
			KeyTag:     k.Tag(),
			OrigTtl:    set[0].Header().Ttl,
			Inception:  uint32(now.Add(-time.Hour).Unix()),
			Expiration: uint32(expire.Unix()),
		}
		// set packs (Apply checked each record) and the key signs (ReadKey
		// checked it): signing does not fail.
		if err := sig.Sign(k.signer, set); err == nil {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// stale reports whether sigs must be made anew at now: they are not by
// exactly keys, or one of them expires within Refresh.
func (s *Signer) stale(sigs []dns.RR, keys []*keyState, now time.Time) bool {
	if len(sigs) != len(keys) {
		return true
	}
	limit := now.Add(s.opts.Refresh).Unix()
	for _, rr := range sigs {
		sig := rr.(*dns.RRSIG)
		if !slices.ContainsFunc(keys, func(k *keyState) bool { return k.Tag() == sig.KeyTag }) {
			return true
		}
		// RFC 1982 arithmetic, as validators compare.
		if int32(sig.Expiration-uint32(limit)) < 0 {
			return true
		}
	}
	return false
}

// Refresh signs anew, at now, every signature that expires within Refresh
// or is not by the keys that sign its RRset now: a key published for
// PublishWait takes over. Call it periodically (every Refresh/10, say); it
// reads no more than the signer holds. It returns what it changed.
func (s *Signer) Refresh(now time.Time) Diff {
	d := &Diff{}
	s.ripen(now)
	for _, n := range s.nodes {
		for t, sigs := range n.sigs {
			if keys := s.signers(n, t); s.stale(sigs, keys, now) {
				d.Removed = append(d.Removed, sigs...)
				n.sigs[t] = s.sign(n.sets[t], keys, now)
				d.Added = append(d.Added, n.sigs[t]...)
			}
		}
		if n.denial != nil {
			if keys := s.signers(n, n.denial.Header().Rrtype); s.stale(n.denialSigs, keys, now) {
				d.Removed = append(d.Removed, n.denialSigs...)
				n.denialSigs = s.sign([]dns.RR{n.denial}, keys, now)
				d.Added = append(d.Added, n.denialSigs...)
			}
		}
	}
	return *d
}
