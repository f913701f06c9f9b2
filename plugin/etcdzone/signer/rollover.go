package signer

import (
	"fmt"
	"slices"
	"time"

	"github.com/miekg/dns"
)

// keyState is a key the signer holds, with when it first saw it.
type keyState struct {
	*Key
	seen  time.Time
	ready bool // published long enough to sign
}

// ksks returns the keys that sign the apex's key records: those with the
// SEP flag, or all when none has it.
func (s *Signer) ksks() []*keyState {
	var out []*keyState
	for _, k := range s.keys {
		if k.KSK() {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return s.keys
	}
	return out
}

// zsks returns the keys that may sign the zone's data: those without the
// SEP flag, or the KSKs (combined signing keys) when there is none.
func (s *Signer) zsks() []*keyState {
	var out []*keyState
	for _, k := range s.keys {
		if !k.KSK() {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return s.ksks()
	}
	return out
}

// signers returns the keys that sign n's RRset of type t: every KSK for
// the apex's DNSKEY, CDS and CDNSKEY sets, else the newest ready ZSK.
func (s *Signer) signers(n *node, t uint16) []*keyState {
	if n.name == s.origin && (t == dns.TypeDNSKEY || t == dns.TypeCDS || t == dns.TypeCDNSKEY) {
		return s.ksks()
	}
	var active *keyState
	for _, k := range s.zsks() {
		if k.ready && (active == nil || k.newer(active)) {
			active = k
		}
	}
	return []*keyState{active}
}

// newer reports whether k is newer than o: made later, or, made in the same
// second (key files give the time to the second), seen later.
func (k *keyState) newer(o *keyState) bool {
	if !k.Created.Equal(o.Created) {
		return k.Created.After(o.Created)
	}
	return k.seen.After(o.seen)
}

// keepOneReady makes the oldest key that may sign the data ready if none
// is: at the start, and when the signing key's file went before its
// successor was published long enough (the zone must be signed by
// something; resolvers that do not know the new key yet fail until they
// fetch the DNSKEY set).
func (s *Signer) keepOneReady() {
	zsks := s.zsks()
	if slices.ContainsFunc(zsks, func(k *keyState) bool { return k.ready }) {
		return
	}
	oldest := zsks[0]
	for _, k := range zsks[1:] {
		if k.Created.Before(oldest.Created) {
			oldest = k
		}
	}
	oldest.ready = true
}

// ripen makes ready the keys published for PublishWait at now.
func (s *Signer) ripen(now time.Time) {
	for _, k := range s.keys {
		if s.ripe(k, now) {
			k.ready = true
		}
	}
}

// ripe reports whether k is not ready yet, but published for PublishWait
// at now.
func (s *Signer) ripe(k *keyState, now time.Time) bool {
	return !k.ready && !now.Before(k.seen.Add(s.opts.PublishWait))
}

// SetKeys replaces the zone's keys by keys (ReadKeys of the directory
// again, when its files changed), at now: a new key is published at once
// (DNSKEY, and CDS and CDNSKEY for a KSK) and signs the data once
// published for PublishWait; a key that is gone is no longer published,
// and what it signed is signed again by the keys there are. It returns
// what changed, or an error (and changes nothing) for a key set New would
// refuse, or one of another algorithm than the zone's.
func (s *Signer) SetKeys(keys []*Key, now time.Time) (Diff, error) {
	if err := checkKeys(keys); err != nil {
		return Diff{}, err
	}
	if alg := s.keys[0].DNSKEY.Algorithm; keys[0].DNSKEY.Algorithm != alg {
		// Resolvers that hold the parent's DS of the old algorithm would
		// find the zone bogus: an algorithm rollover takes both at once.
		return Diff{}, fmt.Errorf("%s: algorithm %s, the zone's keys are %s: changing algorithms is not supported", keys[0].Prefix,
			dns.AlgorithmToString[keys[0].DNSKEY.Algorithm], dns.AlgorithmToString[alg])
	}
	var next []*keyState
	for _, k := range keys {
		if k.DNSKEY.Hdr.Name != s.origin {
			return Diff{}, fmt.Errorf("%s: a key of %s, not %s", k.Prefix, k.DNSKEY.Hdr.Name, s.origin)
		}
		ks := &keyState{Key: k, seen: now}
		if i := slices.IndexFunc(s.keys, func(o *keyState) bool { return o.Tag() == k.Tag() }); i >= 0 {
			ks.seen, ks.ready = s.keys[i].seen, s.keys[i].ready
		}
		next = append(next, ks)
	}
	s.keys = next
	s.keepOneReady()
	d := &Diff{}
	s.settle(s.publishKeys(d), now, d)
	r := s.Refresh(now)
	d.Removed = append(d.Removed, r.Removed...)
	d.Added = append(d.Added, r.Added...)
	return *d, nil
}

// publishKeys sets the apex's key records from the keys: DNSKEY for each,
// CDS (SHA-256) and CDNSKEY for each KSK (RFC 7344, RFC 8078), and
// NSEC3PARAM for NSEC3. It notes the records it changed in d, and returns
// the nodes and RRsets it changed.
func (s *Signer) publishKeys(d *Diff) map[*node]map[uint16]bool {
	h := dns.RR_Header{Name: s.origin, Class: dns.ClassINET, Ttl: s.opts.KeyTTL}
	var dnskeys, cds, cdnskeys []dns.RR
	for _, k := range s.keys {
		key := *k.DNSKEY
		key.Hdr = h
		key.Hdr.Rrtype = dns.TypeDNSKEY
		dnskeys = append(dnskeys, &key)
		if k.KSK() {
			ds := key.ToDS(dns.SHA256).ToCDS()
			ds.Hdr = h
			ds.Hdr.Rrtype = dns.TypeCDS
			cds = append(cds, ds)
			cdnskey := key.ToCDNSKEY()
			cdnskey.Hdr = h
			cdnskey.Hdr.Rrtype = dns.TypeCDNSKEY
			cdnskeys = append(cdnskeys, cdnskey)
		}
	}
	touched := map[*node]map[uint16]bool{}
	s.setOwn(dns.TypeDNSKEY, dnskeys, touched, d)
	s.setOwn(dns.TypeCDS, cds, touched, d)
	s.setOwn(dns.TypeCDNSKEY, cdnskeys, touched, d)
	if !s.opts.NSEC {
		param := &dns.NSEC3PARAM{Hdr: h, Hash: dns.SHA1}
		param.Hdr.Rrtype, param.Hdr.Ttl = dns.TypeNSEC3PARAM, 0
		s.setOwn(dns.TypeNSEC3PARAM, []dns.RR{param}, touched, d)
	}
	return touched
}

// setOwn sets the apex's RRset of type t, one the signer makes, if it
// differs from what it is, and notes the change in d.
func (s *Signer) setOwn(t uint16, rrs []dns.RR, touched map[*node]map[uint16]bool, d *Diff) {
	var old []dns.RR
	if apex := s.nodes[s.origin]; apex != nil {
		old = apex.records(t)
	}
	if sameSet(old, rrs) {
		return
	}
	d.Removed = append(d.Removed, old...)
	d.Added = append(d.Added, rrs...)
	s.set(s.origin, t, rrs, touched)
}

// sameSet reports whether a and b hold the same records.
func sameSet(a, b []dns.RR) bool {
	if len(a) != len(b) {
		return false
	}
	for _, rr := range a {
		if !slices.ContainsFunc(b, func(o dns.RR) bool { return dns.IsDuplicate(rr, o) && rr.Header().Ttl == o.Header().Ttl }) {
			return false
		}
	}
	return true
}
