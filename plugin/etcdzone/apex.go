package etcdzone

import (
	"net/netip"

	"github.com/coredns/coredns/plugin/pkg/dnsutil"

	"github.com/miekg/dns"
)

// apex holds what the Corefile says about the zones' apex: their NS set and
// the fields of their SOA record but the serial.
type apex struct {
	ns []string
	// mname and rname are the SOA's MNAME and RNAME; "" stands for the
	// first name server (the zone's name when there is none) and
	// hostmaster.ZONE.
	mname, rname                    string
	ttl                             uint32
	refresh, retry, expire, minimum uint32
}

// soa returns the SOA record of zone with serial.
func (a *apex) soa(zone string, serial uint32) *dns.SOA {
	mname, rname := a.mname, a.rname
	switch {
	case mname != "":
	case len(a.ns) > 0:
		mname = a.ns[0]
	default:
		mname = zone
	}
	if rname == "" {
		rname = dnsutil.Join("hostmaster", zone)
	}
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: zone, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: a.ttl},
		Ns:      mname,
		Mbox:    rname,
		Serial:  serial,
		Refresh: a.refresh,
		Retry:   a.retry,
		Expire:  a.expire,
		Minttl:  a.minimum,
	}
}

// nsSet returns the NS records at name naming servers.
func (a *apex) nsSet(name string, servers []string) []dns.RR {
	rrs := make([]dns.RR, len(servers))
	for i, ns := range servers {
		rrs[i] = &dns.NS{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: a.ttl}, Ns: ns}
	}
	return rrs
}

// addressRecords returns the A and AAAA records at name of addrs.
func (a *apex) addressRecords(name string, addrs []netip.Addr) []dns.RR {
	rrs := make([]dns.RR, len(addrs))
	for i, addr := range addrs {
		hdr := dns.RR_Header{Name: name, Class: dns.ClassINET, Ttl: a.ttl}
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

// delegation is a subdomain the Corefile delegates to other name servers.
type delegation struct {
	name string   // the zone cut, lower case and fully qualified
	ns   []string // its name servers
	// where is the Corefile's file and line, for start-up errors.
	where string
}

// glue is the address of a name server inside the zone, from the Corefile.
type glue struct {
	name  string
	addrs []netip.Addr
	where string
}
