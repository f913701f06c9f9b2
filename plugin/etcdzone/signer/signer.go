package signer

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/globaladdr/globaladdr/plugin/pkg/dnsname"

	"github.com/miekg/dns"
)

// Options are the settings of a Signer. The zero value of a field is its
// default.
type Options struct {
	// NSEC denies with NSEC records instead of NSEC3 (RFC 5155, SHA-1,
	// no opt-out, iterations 0 and no salt as RFC 9276 asks).
	NSEC bool
	// Validity is how long a new signature is valid: 14 days. Its
	// inception is an hour in the past, for clocks behind ours.
	Validity time.Duration
	// Refresh is how long before its expiry a signature is made anew: 5
	// days.
	Refresh time.Duration
	// Jitter spreads the expiry of new signatures over up to this much
	// before Validity is up, so that they do not all expire (and are
	// refreshed) at once: 12 hours. Refresh + Jitter must be less than
	// Validity.
	Jitter time.Duration
	// KeyTTL is the TTL of the DNSKEY, CDS and CDNSKEY records: 3600 s.
	KeyTTL uint32
	// PublishWait is how long a key added by SetKeys is published before
	// it may sign (RFC 6781's pre-publication): KeyTTL, so that every
	// resolver that holds the DNSKEY set holds the new key.
	PublishWait time.Duration
}

// withDefaults returns o with the defaults for its zero fields, or an error
// if its durations do not fit together.
func (o Options) withDefaults() (Options, error) {
	if o.Validity == 0 {
		o.Validity = 14 * 24 * time.Hour
	}
	if o.Refresh == 0 {
		o.Refresh = 5 * 24 * time.Hour
	}
	if o.Jitter == 0 {
		o.Jitter = 12 * time.Hour
	}
	if o.KeyTTL == 0 {
		o.KeyTTL = 3600
	}
	if o.PublishWait == 0 {
		o.PublishWait = time.Duration(o.KeyTTL) * time.Second
	}
	if o.Validity <= 0 || o.Refresh <= 0 || o.Jitter < 0 || o.Refresh+o.Jitter >= o.Validity {
		return o, fmt.Errorf("validity %v must exceed refresh %v plus jitter %v", o.Validity, o.Refresh, o.Jitter)
	}
	return o, nil
}

// RRset is one owner's records of one type: the unit of a change.
type RRset struct {
	Name string
	Type uint16
	RRs  []dns.RR // none: the owner has no records of Type any more
}

// Diff is what a change did to the records a Signer adds to the zone:
// RRSIG, NSEC3 or NSEC, and at the apex DNSKEY, CDS, CDNSKEY and
// NSEC3PARAM. Removed holds records as they were, Added as they are now; a
// record changed is in both.
type Diff struct {
	Removed, Added []dns.RR
}

// Empty reports whether d changes nothing.
func (d Diff) Empty() bool { return len(d.Removed) == 0 && len(d.Added) == 0 }

// Signer is the signed form of one zone: the zone's RRsets as given, their
// signatures, the denial chain and the apex's key records. It is not safe
// for concurrent use: one goroutine (the zone's builder) calls it.
type Signer struct {
	origin string
	opts   Options
	keys   []*keyState
	nodes  map[string]*node
	chain  []*node // the names of the denial chain, by node.order
}

// node is one name of the zone: one with records, or an empty
// non-terminal above one.
type node struct {
	name       string
	order      string  // its place in the chain: the NSEC3 hash, or orderKey
	sets       []rrset // its RRsets as given (and the apex's key records), by type
	below      int     // names with records below it
	inChain    bool
	denial     dns.RR // its NSEC3 or NSEC record, while in the chain
	denialSigs []dns.RR
}

// rrset is one RRset of a node and its signatures. An rrset without
// records keeps its signatures until they are dropped (and reported).
type rrset struct {
	t         uint16
	rrs, sigs []dns.RR
}

// get returns n's rrset of type t, nil if it has none.
func (n *node) get(t uint16) *rrset {
	for i := range n.sets {
		if n.sets[i].t == t {
			return &n.sets[i]
		}
	}
	return nil
}

// records returns n's records of type t.
func (n *node) records(t uint16) []dns.RR {
	if r := n.get(t); r != nil {
		return r.rrs
	}
	return nil
}

// has reports whether n has records.
func (n *node) has() bool {
	return slices.ContainsFunc(n.sets, func(r rrset) bool { return len(r.rrs) > 0 })
}

// put makes rrs n's records of type t (none: it has none).
func (n *node) put(t uint16, rrs []dns.RR) {
	if r := n.get(t); r != nil {
		r.rrs = rrs
		return
	}
	if len(rrs) > 0 {
		i, _ := slices.BinarySearchFunc(n.sets, t, func(r rrset, t uint16) int { return int(r.t) - int(t) })
		n.sets = slices.Insert(n.sets, i, rrset{t: t, rrs: rrs})
	}
}

// compact forgets n's rrsets that hold neither records nor signatures.
func (n *node) compact() {
	n.sets = slices.DeleteFunc(n.sets, func(r rrset) bool { return len(r.rrs) == 0 && len(r.sigs) == 0 })
}

// New returns the Signer of the zone origin with keys (from ReadKeys), at
// the time now, holding no records yet but the apex's key records: give it
// the zone with Apply. Of the keys that may sign the zone's data (those
// without the SEP flag, or all when every key has it), the oldest signs
// first; the others take over once published for PublishWait.
func New(origin string, keys []*Key, opts Options, now time.Time) (*Signer, error) {
	o, ok := canonical(origin)
	if !ok {
		return nil, fmt.Errorf("%q is no domain name", origin)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	s := &Signer{origin: o, opts: opts, nodes: map[string]*node{}}
	for _, k := range keys {
		if k.DNSKEY.Hdr.Name != o {
			return nil, fmt.Errorf("%s: a key of %s, not %s", k.Prefix, k.DNSKEY.Hdr.Name, o)
		}
		s.keys = append(s.keys, &keyState{Key: k, seen: now})
	}
	s.keepOneReady()
	d := &Diff{}
	s.settle(s.publishKeys(d), now, d)
	return s, nil
}

// Origin returns the zone's name, as the signer writes it.
func (s *Signer) Origin() string { return s.origin }

// Apply changes the zone's RRsets to those given (an RRset of no records
// deletes the owner's records of that type), signs the changed ones, and
// fixes the denial chain around the names that appeared or went: only what
// the change touches is signed anew. It returns what that did to the
// records the signer adds (see Diff), and an error naming each RRset it
// left out: an owner outside the zone or no domain name, a type the signer
// makes itself (RRSIG, NSEC, NSEC3, NSEC3PARAM, DNSKEY, CDS, CDNSKEY), a DS
// at the apex, or records that are no RRset of the owner and type (those
// are left out, the rest of the RRset kept). A delegation is an NS RRset
// below the apex: its NS records and everything below it (glue) are not
// signed nor in the chain; a DS RRset at it is signed (a delegation
// without one is insecure).
func (s *Signer) Apply(changes []RRset, now time.Time) (Diff, error) {
	d := &Diff{}
	var errs []error
	touched := map[*node]map[uint16]bool{}
	buf := make([]byte, 512)
	for _, c := range changes {
		name, ok := canonical(c.Name)
		switch {
		case !ok || !dnsname.In(name, s.origin):
			errs = append(errs, fmt.Errorf("%q: not a name of zone %s", c.Name, s.origin))
			continue
		case ownType(c.Type) || c.Type == dns.TypeDS && name == s.origin:
			errs = append(errs, fmt.Errorf("%s %s: a type the signer makes itself, or a DS at the apex", name, dns.TypeToString[c.Type]))
			continue
		}
		rrs, err := s.rrset(name, c, buf)
		if err != nil {
			errs = append(errs, err)
		}
		s.set(name, c.Type, rrs, touched)
	}
	s.settle(touched, now, d)
	return *d, errors.Join(errs...)
}

// ownType reports whether the signer makes the records of type t.
func ownType(t uint16) bool {
	switch t {
	case dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3, dns.TypeNSEC3PARAM, dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY:
		return true
	}
	return false
}

// rrset returns copies of c's records that belong to it, with the owner
// name canonical and the TTL of the first, and an error if some did not.
// buf is room to pack a record in.
func (s *Signer) rrset(name string, c RRset, buf []byte) ([]dns.RR, error) {
	var out []dns.RR
	var bad int
	for _, rr := range c.RRs {
		if rr == nil {
			bad++
			continue
		}
		owner, ok := canonical(rr.Header().Name)
		if !ok || owner != name || rr.Header().Rrtype != c.Type || rr.Header().Class != dns.ClassINET {
			bad++
			continue
		}
		if l := dns.Len(rr); l > len(buf) {
			buf = make([]byte, l)
		}
		if _, err := dns.PackRR(rr, buf, 0, nil, false); err != nil {
			bad++
			continue
		}
		cp := dns.Copy(rr)
		cp.Header().Name = name
		if len(out) > 0 {
			cp.Header().Ttl = out[0].Header().Ttl
		}
		if !slices.ContainsFunc(out, func(o dns.RR) bool { return dns.IsDuplicate(o, cp) }) {
			out = append(out, cp)
		}
	}
	if bad > 0 {
		return out, fmt.Errorf("%s %s: %d records left out that are no records of this RRset", name, dns.TypeToString[c.Type], bad)
	}
	return out, nil
}

// set makes rrs the RRset of name and type t, notes in touched the nodes
// whose signatures or place in the chain it may change, and keeps the
// counts of names below each node.
func (s *Signer) set(name string, t uint16, rrs []dns.RR, touched map[*node]map[uint16]bool) {
	n := s.node(name)
	had, old := n.has(), n.records(t)
	n.put(t, rrs)
	touch(touched, n, t)
	if has := n.has(); has != had && name != s.origin {
		step := 1
		if !has {
			step = -1
		}
		for p := parent(name); ; p = parent(p) {
			pn := s.node(p)
			pn.below += step
			touch(touched, pn, 0)
			if p == s.origin {
				break
			}
		}
	}
	if t == dns.TypeNS && name != s.origin && (len(old) > 0) != (len(rrs) > 0) {
		// A delegation came or went: what lies below it changes status.
		for _, x := range s.nodes {
			if x != n && dnsname.In(x.name, name) {
				touch(touched, x, 0)
			}
		}
	}
	if t == dns.TypeSOA && name == s.origin && negativeTTL(old) != negativeTTL(rrs) {
		// The denial records' TTL follows the SOA's.
		for _, x := range s.chain {
			touch(touched, x, 0)
		}
	}
}

// touch notes n in touched, and its RRset of type t (unless 0) as changed.
func touch(touched map[*node]map[uint16]bool, n *node, t uint16) {
	if touched[n] == nil {
		touched[n] = map[uint16]bool{}
	}
	if t != 0 {
		touched[n][t] = true
	}
}

// node returns the node of name, made if there is none.
func (s *Signer) node(name string) *node {
	n := s.nodes[name]
	if n == nil {
		n = &node{name: name}
		if s.opts.NSEC {
			n.order = orderKey(name)
		} else {
			n.order = dns.HashName(name, dns.SHA1, 0, "")
		}
		s.nodes[name] = n
	}
	return n
}

// isCut reports whether n is a delegation: NS records below the apex.
func (s *Signer) isCut(n *node) bool { return n.name != s.origin && len(n.records(dns.TypeNS)) > 0 }

// occluded reports whether name lies below a delegation.
func (s *Signer) occluded(name string) bool {
	for p := name; p != s.origin; {
		p = parent(p)
		if n := s.nodes[p]; n != nil && s.isCut(n) {
			return true
		}
		if p == "." {
			break
		}
	}
	return false
}

// signable reports whether n's RRset of type t is signed: it is
// authoritative (at a delegation, only DS is).
func (s *Signer) signable(n *node, t uint16) bool {
	if s.occluded(n.name) {
		return false
	}
	return !s.isCut(n) || t == dns.TypeDS
}

// wantChain reports whether n belongs in the denial chain: an
// authoritative name (a delegation's included), with records or, for
// NSEC3, an empty non-terminal.
func (s *Signer) wantChain(n *node) bool {
	if s.occluded(n.name) {
		return false
	}
	return n.has() || !s.opts.NSEC && n.below > 0
}
