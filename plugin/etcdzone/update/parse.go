package update

import (
	"strings"

	"github.com/miekg/dns"
)

// maxUpdateRecords bounds the records of one UPDATE's prerequisite and
// update sections together: an ACME client sends a few.
const maxUpdateRecords = 64

// Update is one UPDATE message (RFC 2136) after its sections were checked:
// what must hold, and what to change if it does.
type Update struct {
	zone    string
	prereqs []prerequisite
	changes []change
}

// condition is what a prerequisite asks of the zone (RFC 2136, 2.4).
type condition int

const (
	nameInUse    condition = iota // class ANY, type ANY
	rrsetExists                   // class ANY, type T
	nameNotInUse                  // class NONE, type ANY
	rrsetAbsent                   // class NONE, type T
	rrsetEquals                   // class IN, type T: the RRset is exactly rrs
)

// prerequisite is one of an UPDATE's prerequisites; those of class IN of
// one name and type make one, with all their records.
type prerequisite struct {
	cond   condition
	name   string
	rrtype uint16
	rrs    []dns.RR
}

// op is what one record of an UPDATE's update section does (RFC 2136, 2.5).
type op int

const (
	opAdd         op = iota // class IN: add the record
	opDeleteRRset           // class ANY, type T: delete the RRset
	opDeleteName            // class ANY, type ANY: delete every RRset of the name
	opDeleteRR              // class NONE: delete the record
)

// change is one record of an UPDATE's update section.
type change struct {
	op     op
	name   string
	rrtype uint16
	rr     dns.RR // the record to add or delete (opAdd, opDeleteRR)
}

// Parse checks m, an UPDATE, as RFC 2136 section 3 does before it
// looks at the zone's data: the zone section names one of the zones that
// zoneOf finds (else NOTAUTH), and every prerequisite and update record has
// a form the RFC allows, for a name in the zone (else FORMERR or NOTZONE).
// It returns the update, or the rcode of the first error.
func Parse(m *dns.Msg, zoneOf func(name string) string) (*Update, int) {
	if len(m.Question) != 1 || m.Question[0].Qtype != dns.TypeSOA || m.Question[0].Qclass != dns.ClassINET {
		return nil, dns.RcodeFormatError
	}
	u := &Update{zone: zoneOf(strings.ToLower(m.Question[0].Name))}
	if u.zone == "" || u.zone != strings.ToLower(m.Question[0].Name) {
		return nil, dns.RcodeNotAuth
	}
	if len(m.Answer)+len(m.Ns) > maxUpdateRecords {
		return nil, dns.RcodeRefused
	}
	for _, rr := range m.Answer {
		if rcode := u.addPrerequisite(rr); rcode != dns.RcodeSuccess {
			return nil, rcode
		}
	}
	for _, rr := range m.Ns {
		if rcode := u.addChange(rr); rcode != dns.RcodeSuccess {
			return nil, rcode
		}
	}
	return u, dns.RcodeSuccess
}

// addPrerequisite checks rr, a record of the prerequisite section, and adds
// what it asks (RFC 2136, 3.2.1).
func (u *Update) addPrerequisite(rr dns.RR) int {
	rr = lowerOwner(rr)
	h := rr.Header()
	name := h.Name
	switch {
	case h.Ttl != 0:
		return dns.RcodeFormatError
	case !dns.IsSubDomain(u.zone, name):
		return dns.RcodeNotZone
	}
	p := prerequisite{name: name, rrtype: h.Rrtype}
	switch h.Class {
	case dns.ClassANY, dns.ClassNONE:
		if h.Rdlength != 0 || isMeta(h.Rrtype) && h.Rrtype != dns.TypeANY {
			return dns.RcodeFormatError
		}
		p.cond = emptyCondition(h.Class, h.Rrtype)
	case dns.ClassINET:
		if isMeta(h.Rrtype) {
			return dns.RcodeFormatError
		}
		for i, q := range u.prereqs {
			if q.cond == rrsetEquals && q.name == name && q.rrtype == h.Rrtype {
				u.prereqs[i].rrs = append(q.rrs, rr)
				return dns.RcodeSuccess
			}
		}
		p.cond, p.rrs = rrsetEquals, []dns.RR{rr}
	default:
		return dns.RcodeFormatError
	}
	u.prereqs = append(u.prereqs, p)
	return dns.RcodeSuccess
}

// emptyCondition returns the condition of a prerequisite without data, of
// class ANY or NONE.
func emptyCondition(class, rrtype uint16) condition {
	switch {
	case class == dns.ClassANY && rrtype == dns.TypeANY:
		return nameInUse
	case class == dns.ClassANY:
		return rrsetExists
	case rrtype == dns.TypeANY:
		return nameNotInUse
	}
	return rrsetAbsent
}

// addChange checks rr, a record of the update section, and adds what it does
// (RFC 2136, 3.4.1).
func (u *Update) addChange(rr dns.RR) int {
	rr = lowerOwner(rr)
	h := rr.Header()
	c := change{name: h.Name, rrtype: h.Rrtype, rr: rr}
	if !dns.IsSubDomain(u.zone, c.name) {
		return dns.RcodeNotZone
	}
	switch h.Class {
	case dns.ClassINET:
		if isMeta(h.Rrtype) {
			return dns.RcodeFormatError
		}
		c.op = opAdd
	case dns.ClassANY:
		if h.Ttl != 0 || h.Rdlength != 0 || isMeta(h.Rrtype) && h.Rrtype != dns.TypeANY {
			return dns.RcodeFormatError
		}
		c.op = opDeleteRRset
		if h.Rrtype == dns.TypeANY {
			c.op = opDeleteName
		}
	case dns.ClassNONE:
		if h.Ttl != 0 || isMeta(h.Rrtype) {
			return dns.RcodeFormatError
		}
		c.op = opDeleteRR
		h.Class = dns.ClassINET // the record to delete, as the zone holds it
	default:
		return dns.RcodeFormatError
	}
	u.changes = append(u.changes, c)
	return dns.RcodeSuccess
}

// lowerOwner returns a copy of rr with its owner name in lower case, as the
// zone's records have theirs.
func lowerOwner(rr dns.RR) dns.RR {
	rr = dns.Copy(rr)
	rr.Header().Name = strings.ToLower(rr.Header().Name)
	return rr
}

// isMeta reports whether t is a meta type or a query type, which no zone
// holds (RFC 6895, 3.1).
func isMeta(t uint16) bool {
	switch t {
	case dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeMAILA, dns.TypeMAILB, dns.TypeOPT, dns.TypeTSIG, dns.TypeTKEY:
		return true
	}
	return false
}
