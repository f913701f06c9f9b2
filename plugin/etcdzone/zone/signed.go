package zone

import (
	"slices"
	"strings"

	"github.com/coredns/coredns/request"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/signer"

	"github.com/miekg/dns"
)

// Signatures is the signed form of a version (a *signer.Signer that was
// given the version's records): what answers to queries with DO add.
type Signatures interface {
	RRSIGs(name string, t uint16) []dns.RR
	Denial(name string) []dns.RR
	Cover(name string) []dns.RR
	Encloser(name string) string
	RRset(name string, t uint16) []dns.RR
	NSEC() bool
}

// FromSigner reports whether the answer to state's query comes from the
// signer alone: the apex's DNSKEY, CDS, CDNSKEY and NSEC3PARAM, and a
// delegation's DS. Any other is v.Answer's, made before SignedAnswer.
func (v *Version) FromSigner(state request.Request) bool {
	qname, qtype := dns.CanonicalName(state.Name()), state.QType()
	return qname == v.z.Name && signerType(qtype) || qtype == dns.TypeDS && slices.Contains(v.z.Cuts, qname)
}

// SignedAnswer is the answer for a zone signed as sigs: m is v.Answer's
// reply to state's query, nil when v.FromSigner(state), which sigs then
// makes. With DO, each RRset carries its signatures, and NXDOMAIN, NODATA,
// wildcard answers and referrals the NSEC3 (NSEC) records that prove them
// (RFC 4035, 3.1; RFC 5155, 7.2). It chases no CNAME: v.Answer did, so a
// caller may read sigs under a lock that the chase never needs.
func (v *Version) SignedAnswer(state request.Request, m *dns.Msg, sigs Signatures) *dns.Msg {
	qname, qtype := dns.CanonicalName(state.Name()), state.QType()
	if m == nil {
		m = new(dns.Msg)
		m.SetReply(state.Req)
		m.Authoritative = true
		m.Answer = slices.Clone(sigs.RRset(qname, qtype))
		if len(m.Answer) == 0 {
			m.Ns = []dns.RR{v.SOA()}
		}
	}
	if !state.Do() {
		return m
	}
	p := proof{sigs: sigs, origin: v.z.Name}
	m.Answer = p.signSets(m.Answer)
	m.Ns = p.signSets(m.Ns)
	target := qname
	if n := len(m.Answer); n > 0 && qtype != dns.TypeCNAME {
		if c, ok := m.Answer[n-1].(*dns.CNAME); ok {
			target = dns.CanonicalName(c.Target)
		}
	}
	if dns.IsSubDomain(v.z.Name, target) {
		switch {
		case m.Rcode == dns.RcodeNameError:
			p.nameError(target)
		case m.Rcode == dns.RcodeSuccess && hasType(m.Ns, dns.TypeSOA):
			p.noData(target)
		case m.Rcode == dns.RcodeSuccess && hasType(m.Ns, dns.TypeNS):
			// A referral, the name's or its CNAME's target's.
			p.referral(m.Ns[0].Header().Name)
		}
	}
	m.Ns = append(m.Ns, p.extra...)
	return m
}

// signerType reports whether the signer makes the apex's records of type t.
func signerType(t uint16) bool {
	switch t {
	case dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY, dns.TypeNSEC3PARAM:
		return true
	}
	return false
}

// hasType reports whether rrs hold a record of type t.
func hasType(rrs []dns.RR, t uint16) bool {
	return slices.ContainsFunc(rrs, func(rr dns.RR) bool { return rr.Header().Rrtype == t })
}

// proof gathers the signatures and denial records of one answer.
type proof struct {
	sigs   Signatures
	origin string
	// extra are the denial records (with their signatures) for Authority.
	extra []dns.RR
}

// add appends rrs to p.extra, those it holds already aside.
func (p *proof) add(rrs []dns.RR) {
	for _, rr := range rrs {
		if !slices.Contains(p.extra, rr) {
			p.extra = append(p.extra, rr)
		}
	}
}

// signSets returns section with the signatures of each of its RRsets after
// it. An RRset without signatures at a name that does not exist is a
// wildcard's expansion: it gets the wildcard's, and p the proof that no
// closer name exists (RFC 4035, 3.1.3.3).
func (p *proof) signSets(section []dns.RR) []dns.RR {
	out := make([]dns.RR, 0, 2*len(section))
	for i := 0; i < len(section); {
		h := section[i].Header()
		j := i + 1
		for j < len(section) && section[j].Header().Rrtype == h.Rrtype && strings.EqualFold(section[j].Header().Name, h.Name) {
			j++
		}
		out = append(out, section[i:j]...)
		i = j
		name := dns.CanonicalName(h.Name)
		sigs := p.sigs.RRSIGs(name, h.Rrtype)
		if len(sigs) == 0 && dns.IsSubDomain(p.origin, name) && h.Rrtype != dns.TypeNS {
			if ce := p.sigs.Encloser(name); ce != name {
				for _, sig := range p.sigs.RRSIGs("*."+ce, h.Rrtype) {
					cp := dns.Copy(sig)
					cp.Header().Name = h.Name
					out = append(out, cp)
				}
				p.noCloser(name, ce)
			}
			continue
		}
		out = append(out, sigs...)
	}
	return out
}

// noCloser adds the proof that no name closer to name than its closest
// encloser ce exists: the NSEC3 record covering the next closer name, or
// the NSEC record covering name.
func (p *proof) noCloser(name, ce string) {
	if p.sigs.NSEC() {
		p.add(p.sigs.Cover(name))
		return
	}
	p.add(p.sigs.Cover(nextCloser(name, ce)))
}

// nameError adds the proof that name does not exist: its closest encloser,
// no closer name, and no wildcard at the encloser.
func (p *proof) nameError(name string) {
	ce := p.sigs.Encloser(name)
	if !p.sigs.NSEC() {
		p.add(p.sigs.Denial(ce))
	}
	p.noCloser(name, ce)
	p.add(p.sigs.Cover("*." + ce))
}

// noData adds the proof that name has no records of the type asked: its
// own denial record, or for a name a wildcard stands for, the closest
// encloser's, no closer name, and the wildcard's.
func (p *proof) noData(name string) {
	ce := p.sigs.Encloser(name)
	if ce == name {
		if d := p.sigs.Denial(name); len(d) > 0 {
			p.add(d)
		} else {
			p.add(p.sigs.Cover(name)) // an empty non-terminal, with NSEC
		}
		return
	}
	if !p.sigs.NSEC() {
		p.add(p.sigs.Denial(ce))
	}
	p.noCloser(name, ce)
	p.add(p.sigs.Denial("*." + ce))
}

// referral adds a delegation's DS RRset with its signatures, or the proof
// that it has none (an insecure delegation).
func (p *proof) referral(cut string) {
	cut = dns.CanonicalName(cut)
	if cut == p.origin {
		return
	}
	if ds := p.sigs.RRset(cut, dns.TypeDS); len(ds) > 0 {
		p.add(ds)
		p.add(p.sigs.RRSIGs(cut, dns.TypeDS))
		return
	}
	p.add(p.sigs.Denial(cut))
}

// nextCloser returns the name one label longer than ce on the way to name,
// ce's descendant.
func nextCloser(name, ce string) string {
	labels := dns.SplitDomainName(name)
	n := dns.CountLabel(ce)
	return dns.Fqdn(strings.Join(labels[len(labels)-n-1:], "."))
}

// Signed notes that a signer adds n records to v, before v is published:
// an IXFR of v weighs its changes against the signed zone's size.
func (v *Version) Signed(n int) { v.signed = n }

// Changes returns the RRsets of v that d, the change that made v, touched,
// with their records in v (none for one deleted), and v's SOA: what a
// signer applies.
func (v *Version) Changes(d Delta) []signer.RRset {
	type key struct {
		name string
		t    uint16
	}
	seen := map[key]bool{}
	out := []signer.RRset{{Name: v.z.Name, Type: dns.TypeSOA, RRs: []dns.RR{v.SOA()}}}
	for _, rrs := range [][]dns.RR{d.Removed, d.Added} {
		for _, rr := range rrs {
			k := key{dns.CanonicalName(rr.Header().Name), rr.Header().Rrtype}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, signer.RRset{Name: k.name, Type: k.t, RRs: v.rrset(k.name, k.t)})
		}
	}
	return out
}

// rrset returns v's records of name and type t.
func (v *Version) rrset(name string, t uint16) []dns.RR {
	if name == v.z.Name && t == dns.TypeNS {
		return v.ns
	}
	return v.names.byName[name].typ(t)
}
