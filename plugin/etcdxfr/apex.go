package etcdxfr

import (
	"github.com/coredns/coredns/plugin/pkg/dnsutil"

	"github.com/miekg/dns"
)

// apex holds what the Corefile says about the zones' apex: their NS set and
// the fields of their SOA record but the serial.
type apex struct {
	ns []string
	// mname and rname are the SOA's MNAME and RNAME; "" stands for the
	// first name server and hostmaster.ZONE.
	mname, rname                    string
	ttl                             uint32
	refresh, retry, expire, minimum uint32
}

// soa returns the SOA record of zone with serial.
func (a *apex) soa(zone string, serial uint32) *dns.SOA {
	mname, rname := a.mname, a.rname
	if mname == "" {
		mname = a.ns[0]
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

// nsSet returns the NS records of zone.
func (a *apex) nsSet(zone string) []dns.RR {
	rrs := make([]dns.RR, len(a.ns))
	for i, ns := range a.ns {
		rrs[i] = &dns.NS{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: a.ttl}, Ns: ns}
	}
	return rrs
}
