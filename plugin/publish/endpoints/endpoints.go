// Package endpoints turns a zone, as its transfer gives it, into the
// endpoints of external-dns's DNSEndpoint objects: one per name and type,
// with the record set's TTL and its data as external-dns's providers read
// it; and splits them into objects of a bounded size.
package endpoints

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"github.com/miekg/dns"
)

// carried are the types external-dns manages (its endpoint package's
// record types); a record of another type (the signatures and the rest of
// DNSSEC among them) has no endpoint, and is counted as skipped.
var carried = map[uint16]bool{
	dns.TypeA:     true,
	dns.TypeAAAA:  true,
	dns.TypeCNAME: true,
	dns.TypeTXT:   true,
	dns.TypeSRV:   true,
	dns.TypeNS:    true,
	dns.TypePTR:   true,
	dns.TypeMX:    true,
	dns.TypeNAPTR: true,
}

// FromZone returns the endpoints of the records rrs of zone origin (a
// transfer's records, SOAs included), sorted by name and type, and the
// records skipped, by type. The SOA and the apex NS set are left out: they
// are the server's own, and the provider's zone has its own. A record set's
// TTL is the lowest of its records'; the targets are sorted, so that the
// same zone always gives the same endpoints.
func FromZone(origin string, rrs []dns.RR) (eps []wire.Endpoint, skipped map[uint16]int) {
	origin = dns.CanonicalName(origin)
	type key struct {
		name string
		typ  uint16
	}
	sets := map[key]*wire.Endpoint{}
	skipped = map[uint16]int{}
	for _, rr := range rrs {
		h := rr.Header()
		name := dns.CanonicalName(h.Name)
		switch {
		case h.Rrtype == dns.TypeSOA, h.Rrtype == dns.TypeNS && name == origin:
			continue
		case !carried[h.Rrtype] || h.Class != dns.ClassINET:
			skipped[h.Rrtype]++
			continue
		}
		k := key{name, h.Rrtype}
		e := sets[k]
		if e == nil {
			e = &wire.Endpoint{DNSName: strings.TrimSuffix(name, "."), RecordType: dns.TypeToString[h.Rrtype], RecordTTL: int64(h.Ttl)}
			sets[k] = e
		}
		e.RecordTTL = min(e.RecordTTL, int64(h.Ttl))
		e.Targets = append(e.Targets, Target(rr))
	}
	eps = make([]wire.Endpoint, 0, len(sets))
	for _, e := range sets {
		slices.Sort(e.Targets)
		e.Targets = slices.Compact(e.Targets)
		eps = append(eps, *e)
	}
	slices.SortFunc(eps, func(a, b wire.Endpoint) int {
		return cmp.Or(strings.Compare(a.DNSName, b.DNSName), strings.Compare(a.RecordType, b.RecordType))
	})
	return eps, skipped
}

// Target returns rr's data as an endpoint's target, in the form
// external-dns's CRD source and its providers take: an address as it is
// written; the name of a CNAME, NS, PTR or MX record without its final dot
// (the CRD source drops an NS target ending in a dot, and providers that
// want the dot add it), but an SRV record's with it (the CRD source drops
// one without); a TXT record's strings each in quotes, as in a zone file
// (PowerDNS refuses an unquoted text, and the RFC 2136 provider would split
// it at its spaces); the other types' fields as a zone file writes them.
func Target(rr dns.RR) string {
	switch rr := rr.(type) {
	case *dns.A:
		return rr.A.String()
	case *dns.AAAA:
		return rr.AAAA.String()
	case *dns.CNAME:
		return bare(rr.Target)
	case *dns.NS:
		return bare(rr.Ns)
	case *dns.PTR:
		return bare(rr.Ptr)
	case *dns.MX:
		return strconv.Itoa(int(rr.Preference)) + " " + bare(rr.Mx)
	case *dns.SRV:
		return strings.Join([]string{strconv.Itoa(int(rr.Priority)), strconv.Itoa(int(rr.Weight)), strconv.Itoa(int(rr.Port)), rr.Target}, " ")
	}
	// TXT and NAPTR: the data as the record's text has it, after the header.
	return strings.TrimPrefix(rr.String(), rr.Header().String())
}

// bare returns name without its final dot; the root stays ".".
func bare(name string) string {
	if name == "." {
		return name
	}
	return strings.TrimSuffix(name, ".")
}
