package zone

import (
	"net/netip"

	"github.com/coredns/coredns/plugin/pkg/dnsutil"

	"github.com/miekg/dns"
)

// Apex holds what the Corefile says about the zones' apex: their NS set and
// the fields of their SOA record but the serial.
type Apex struct {
	NS []string
	// MName and RName are the SOA's MNAME and RNAME; "" stands for the
	// first name server (the zone's name when there is none) and
	// hostmaster.ZONE.
	MName, RName                    string
	TTL                             uint32
	Refresh, Retry, Expire, Minimum uint32
}

// SOA returns the SOA record of zone with serial.
func (a *Apex) SOA(zone string, serial uint32) *dns.SOA {
	mname, rname := a.MName, a.RName
	switch {
	case mname != "":
	case len(a.NS) > 0:
		mname = a.NS[0]
	default:
		mname = zone
	}
	if rname == "" {
		rname = dnsutil.Join("hostmaster", zone)
	}
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: a.TTL},
		Ns:      mname,
		Mbox:    rname,
		Serial:  serial,
		Refresh: a.Refresh,
		Retry:   a.Retry,
		Expire:  a.Expire,
		Minttl:  a.Minimum,
	}
}

// NSSet returns the NS records at name naming servers.
func (a *Apex) NSSet(name string, servers []string) []dns.RR {
	rrs := make([]dns.RR, len(servers))
	for i, ns := range servers {
		rrs[i] = &dns.NS{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: a.TTL}, Ns: ns}
	}
	return rrs
}

// AddressRecords returns the A and AAAA records at name of addrs.
func (a *Apex) AddressRecords(name string, addrs []netip.Addr) []dns.RR {
	rrs := make([]dns.RR, len(addrs))
	for i, addr := range addrs {
		hdr := dns.RR_Header{Name: name, Class: dns.ClassINET, Ttl: a.TTL}
		if addr.Is4() {
			hdr.Rrtype = dns.TypeA
			rrs[i] = &dns.A{Hdr: hdr, A: addr.AsSlice()}
		} else {
			hdr.Rrtype = dns.TypeAAAA
			rrs[i] = &dns.AAAA{Hdr: hdr, AAAA: addr.AsSlice()}
		}
	}
	return rrs
}
