package conformance

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	"github.com/miekg/dns"
)

// question is a query and the answers (see answer) the internal and the
// external view must give.
type question struct {
	name               string
	qtype              uint16
	internal, external string
}

// questions returns what to ask the views once the release rel has
// replaced the records before by the records after: every record of after,
// its ownership records, and every name of before that after no longer has.
func questions(rel Release, before, after []externaldns.Record) []question {
	now := byName(after)
	var qs []question
	for _, r := range after {
		qs = append(qs, recordQuestions(r, now)...)
	}
	nx := answer(dns.RcodeNameError)
	for _, name := range names(before) {
		if _, ok := now[name]; ok {
			continue
		}
		for _, r := range byName(before)[name] {
			owner := question{ownershipName(r), dns.TypeTXT, nx, nx}
			if rel.KeepsOwnership && r.Type != "PTR" {
				owner = recordQuestions(r, now)[0]
			}
			qs = append(qs, question{r.Name, dns.StringToType[r.Type], nx, nx}, owner)
		}
	}
	return qs
}

// recordQuestions returns the questions about r, one of the records now:
// first the one about its ownership record, then those about its data.
func recordQuestions(r externaldns.Record, now map[string][]externaldns.Record) []question {
	owned := &dns.TXT{Hdr: dns.RR_Header{Rrtype: dns.TypeTXT}, Txt: []string{
		`"heritage=external-dns,external-dns/owner=` + externaldns.DefaultOwner + `,external-dns/resource=` + r.Resource + `"`,
	}}
	legacy := r.Format == externaldns.Legacy
	nodata, nx := answer(dns.RcodeSuccess), answer(dns.RcodeNameError)
	qs := []question{{ownershipName(r), dns.TypeTXT, answer(dns.RcodeSuccess, owned), nx}}
	rrs := targets(r)
	switch r.Type {
	case "A", "AAAA":
		qs = append(qs, question{r.Name, dns.StringToType[r.Type], answer(dns.RcodeSuccess, rrs...), answer(dns.RcodeSuccess, global(rrs)...)})
		if legacy && r.Type == "A" {
			// The ownership text stored beside an address is a TXT
			// record of the name, which the external view withholds.
			qs = append(qs, question{r.Name, dns.TypeTXT, answer(dns.RcodeSuccess, owned), nodata})
		}
	case "CNAME":
		// The ownership text stored beside the canonical name (legacy) is
		// left out: a name with a CNAME holds nothing else.
		for _, to := range now[r.Targets[0]] {
			if to.Type == "A" {
				rrs = append(rrs, targets(to)...)
			}
		}
		qs = append(qs, question{r.Name, dns.TypeA, answer(dns.RcodeSuccess, rrs...), answer(dns.RcodeSuccess, global(rrs)...)})
		qs = append(qs, question{r.Name, dns.TypeCNAME, answer(dns.RcodeSuccess, targets(r)...), answer(dns.RcodeSuccess, targets(r)...)})
	case "TXT":
		internal := rrs
		if legacy {
			internal = append(slices.Clone(rrs), owned)
		}
		qs = append(qs, question{r.Name, dns.TypeTXT, answer(dns.RcodeSuccess, internal...), answer(dns.RcodeSuccess, rrs...)})
	case "PTR":
		// The steps' PTR records are those of internal addresses: their
		// reverse names tell the address, and do not exist outside.
		qs = append(qs, question{r.Name, dns.TypePTR, answer(dns.RcodeSuccess, rrs...), answer(dns.RcodeNameError)})
	}
	return qs
}

// ownershipName returns the name of r's ownership record in external-dns's
// TXT registry: the first label prefixed with the lower-case type.
func ownershipName(r externaldns.Record) string {
	return strings.ToLower(r.Type) + "-" + r.Name
}

// targets returns r's targets as DNS records without owner names.
func targets(r externaldns.Record) []dns.RR {
	var rrs []dns.RR
	for _, t := range r.Targets {
		switch r.Type {
		case "A":
			rrs = append(rrs, &dns.A{Hdr: dns.RR_Header{Rrtype: dns.TypeA}, A: netip.MustParseAddr(t).AsSlice()})
		case "AAAA":
			rrs = append(rrs, &dns.AAAA{Hdr: dns.RR_Header{Rrtype: dns.TypeAAAA}, AAAA: netip.MustParseAddr(t).AsSlice()})
		case "CNAME":
			rrs = append(rrs, &dns.CNAME{Hdr: dns.RR_Header{Rrtype: dns.TypeCNAME}, Target: dns.Fqdn(t)})
		case "TXT":
			rrs = append(rrs, &dns.TXT{Hdr: dns.RR_Header{Rrtype: dns.TypeTXT}, Txt: []string{t}})
		case "PTR":
			rrs = append(rrs, &dns.PTR{Hdr: dns.RR_Header{Rrtype: dns.TypePTR}, Ptr: dns.Fqdn(t)})
		}
	}
	return rrs
}

// global returns rrs as the external view shows them: each internal address
// replaced by the global address of its family, once.
func global(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	seen := map[string]bool{}
	for _, rr := range rrs {
		rr = dns.Copy(rr)
		switch rr := rr.(type) {
		case *dns.A:
			if a, _ := netip.AddrFromSlice(rr.A); externalPolicy.IsInternal(a.Unmap()) {
				rr.A = netip.MustParseAddr(global4).AsSlice()
			}
		case *dns.AAAA:
			if a, _ := netip.AddrFromSlice(rr.AAAA); externalPolicy.IsInternal(a) {
				rr.AAAA = netip.MustParseAddr(global6).AsSlice()
			}
		}
		if !seen[rr.String()] {
			seen[rr.String()] = true
			out = append(out, rr)
		}
	}
	return out
}
