// Package oracle holds a name server's answers against BIND 9's for the same
// zone: BIND, a secondary of the server under test, loads the zone by
// transfer, and both are asked the same questions about every name of it.
// Where they differ, BIND's answer is taken for the authoritative one. It is
// for tests only: nothing of the product imports it.
package oracle

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// Types are the record types asked about every name.
var Types = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeTXT, dns.TypeNS, dns.TypeSOA, dns.TypeMX, dns.TypeSRV}

// Check starts BIND on bindAddr (from nameserver.FreeLoopbackAddr) as a
// secondary of p, waits until it serves the serial p serves, and asks both
// the questions of Questions about BIND's copy of the zone and about names,
// those the zone's source holds (which p may not show). It fails t for each
// answer that differs, and logs "N/N queries agree".
func Check(t testing.TB, bindAddr string, p nameserver.Primary, names []string) {
	t.Helper()
	bind := nameserver.StartBIND(t, bindAddr, p)
	if err := sameSerial(p.Addr, bind.Addr, p.Zone); err != nil {
		t.Fatalf("BIND did not load the zone: %v\n%s", err, bind.Output())
	}
	qs := Questions(p.Zone, nameserver.AXFR(t, bind.Addr, p.Zone, nil), names)
	diffs, err := Compare(p.Addr, bind.Addr, qs)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	t.Logf("%d/%d queries agree with BIND", len(qs)-len(diffs), len(qs))
}

// sameSerial waits up to 30 s until BIND, at bind, serves zone with the
// serial the primary serves.
func sameSerial(primary, bind, zone string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		want, err := serial(primary, zone)
		if err != nil {
			return err
		}
		got, err := serial(bind, zone)
		if err == nil && got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("BIND serves serial %d (%v), the primary %d", got, err, want)
		}
		time.Sleep(100 * time.Millisecond) // polling: BIND transfers on its own time
	}
}

// serial returns the serial of zone's SOA at addr.
func serial(addr, zone string) (uint32, error) {
	r, err := ask(addr, dns.Question{Name: zone, Qtype: dns.TypeSOA, Qclass: dns.ClassINET})
	if err != nil {
		return 0, err
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("no SOA in %s's answer", addr)
}

// Questions returns the questions to ask about zone, given its records rrs
// (a transfer) and more owner names: for its apex, every owner name and
// every name between them, a name below each of them, two names under each
// wildcard and a name that does not exist, each with every type of Types.
func Questions(zone string, rrs []dns.RR, owners []string) []dns.Question {
	for _, rr := range rrs {
		owners = append(owners, rr.Header().Name)
	}
	names := map[string]bool{zone: true, "no-such-name." + zone: true}
	for _, owner := range owners {
		name := strings.ToLower(dns.Fqdn(owner))
		if !dns.IsSubDomain(zone, name) {
			continue
		}
		for n := name; n != zone && dns.IsSubDomain(zone, n); n = parent(n) {
			names[n] = true
		}
		names["below."+name] = true
		if strings.HasPrefix(name, "*.") {
			names["covered"+name[1:]] = true
			names["deeper.covered"+name[1:]] = true
		}
	}
	var qs []dns.Question
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	}) {
		for _, t := range Types {
			qs = append(qs, dns.Question{Name: name, Qtype: t, Qclass: dns.ClassINET})
		}
	}
	return qs
}

// parent returns the name one label up.
func parent(name string) string {
	i, end := dns.NextLabel(name, 0)
	if end {
		return "."
	}
	return name[i:]
}

// Compare asks server and bind each question, as a resolver does (over UDP,
// without recursion), and returns how each answer of server differs from
// bind's: in its rcode, its AA bit, its Answer records (TTLs aside), the
// SOA in its Authority section, or, unless it answers (NOERROR with
// records), the NS records there and the addresses in Additional: a
// referral's NS set and glue, none in a negative answer or a SERVFAIL.
func Compare(server, bind string, qs []dns.Question) ([]string, error) {
	var diffs []string
	for _, q := range qs {
		got, err := ask(server, q)
		if err != nil {
			return nil, err
		}
		want, err := ask(bind, q)
		if err != nil {
			return nil, err
		}
		if g, w := summary(got), summary(want); g != w {
			diffs = append(diffs, fmt.Sprintf("%s %s:\n\tgot  %s\n\tBIND %s", q.Name, dns.TypeToString[q.Qtype], g, w))
		}
	}
	return diffs, nil
}

// ask asks addr q, over TCP when a UDP answer is truncated.
func ask(addr string, q dns.Question) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.Question = []dns.Question{q}
	m.Id = dns.Id()
	m.SetEdns0(1232, false)
	c := &dns.Client{Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(m, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s at %s: %w", q.Name, dns.TypeToString[q.Qtype], addr, err)
	}
	return r, nil
}

// summary returns what Compare compares of r, as text: its rcode, its AA
// bit, its Answer records sorted, without their TTLs, the SOA records in its
// Authority section, and, unless r answers (NOERROR with records), the NS
// records there and the addresses in its Additional section. An answer's
// are left out: BIND adds the apex's NS set and the addresses of their
// targets to answers for a query without RD; etcdzone adds no NS set, and
// the addresses of SRV and MX targets.
func summary(r *dns.Msg) string {
	text := func(rrs []dns.RR, only uint16) []string {
		var out []string
		for _, rr := range rrs {
			if only != 0 && rr.Header().Rrtype != only {
				continue
			}
			rr = dns.Copy(rr)
			rr.Header().Ttl = 0
			out = append(out, strings.ToLower(rr.String()))
		}
		slices.Sort(out)
		return out
	}
	s := fmt.Sprintf("%s aa=%v answer=%q soa=%q", dns.RcodeToString[r.Rcode], r.Authoritative, text(r.Answer, 0), text(r.Ns, dns.TypeSOA))
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		s += fmt.Sprintf(" ns=%q glue=%q", text(r.Ns, dns.TypeNS), append(text(r.Extra, dns.TypeA), text(r.Extra, dns.TypeAAAA)...))
	}
	return s
}
