package signer

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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

// job is the signing of one RRset of a node: of type t, or its denial
// record when t is 0.
type job struct {
	n    *node
	t    uint16
	set  []dns.RR
	keys []*keyState
}

// resign drops the signatures of n's RRset of type t (0: its denial
// record) into d, and returns the job that signs it anew.
func (s *Signer) resign(n *node, t uint16, d *Diff) job {
	if t == 0 {
		d.Removed = append(d.Removed, n.denialSigs...)
		n.denialSigs = nil
		return job{n: n, set: []dns.RR{n.denial}, keys: s.signers(n, n.denial.Header().Rrtype)}
	}
	r := n.get(t)
	d.Removed = append(d.Removed, r.sigs...)
	r.sigs = nil
	return job{n: n, t: t, set: r.rrs, keys: s.signers(n, t)}
}

// signAll does jobs, on every CPU when they are many (a zone's first
// load, a key taking over), and adds the signatures to d.
func (s *Signer) signAll(jobs []job, now time.Time, d *Diff) {
	sigs := make([][]dns.RR, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), len(jobs)/64+1)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(jobs); i = int(next.Add(1) - 1) {
				sigs[i] = s.sign(jobs[i].set, jobs[i].keys, now)
			}
		})
	}
	wg.Wait()
	for i, j := range jobs {
		if j.t == 0 {
			j.n.denialSigs = sigs[i]
		} else {
			j.n.get(j.t).sigs = sigs[i]
		}
		d.Added = append(d.Added, sigs[i]...)
	}
}

// Refresh signs anew, at now, every signature that expires within Refresh
// or is not by the keys that sign its RRset now: a key published for
// PublishWait takes over. Call it periodically (every Refresh/10, say); it
// reads no more than the signer holds. It returns what it changed.
func (s *Signer) Refresh(now time.Time) Diff {
	d := &Diff{}
	s.ripen(now)
	var jobs []job
	s.eachStale(now, func(n *node, t uint16) bool {
		jobs = append(jobs, s.resign(n, t, d))
		return true
	})
	s.signAll(jobs, now, d)
	return *d
}

// Due reports whether Refresh at now would change anything: whether a key
// takes over signing the data, or a signature is to be made anew. It
// changes nothing, so that a reader's lock is enough.
func (s *Signer) Due(now time.Time) bool {
	if slices.ContainsFunc(s.zsks(), func(k *keyState) bool { return s.ripe(k, now) }) {
		return true
	}
	due := false
	s.eachStale(now, func(*node, uint16) bool {
		due = true
		return false
	})
	return due
}

// eachStale calls f with each node and type of an RRset whose signatures
// are stale at now (type 0: the node's denial record), until f returns
// false.
func (s *Signer) eachStale(now time.Time, f func(n *node, t uint16) bool) {
	for _, n := range s.nodes {
		for _, r := range n.sets {
			if len(r.sigs) > 0 && s.stale(r.sigs, s.signers(n, r.t), now) && !f(n, r.t) {
				return
			}
		}
		if n.denial != nil && s.stale(n.denialSigs, s.signers(n, n.denial.Header().Rrtype), now) && !f(n, 0) {
			return
		}
	}
}
