package signer

import (
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// TestValidatedByUnbound serves the signed zone from NSD as a primary zone
// file (NSD cannot sign: it serves the records and proofs as they are) and
// asks Debian's Unbound, validating with the zone's KSK as a lab trust
// anchor (its DS, from the zone's CDS), for an existing name, one that does
// not exist, a type a name lacks and a wildcard's expansion: each answer is
// secure (AD). So for the whole zone, after incremental changes, and in the
// middle of a ZSK rollover; with NSEC3 and with NSEC.
func TestValidatedByUnbound(t *testing.T) {
	for _, nsec := range []bool{false, true} {
		name := "NSEC3"
		if nsec {
			name = "NSEC"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			now := time.Now().Add(-10 * time.Minute)
			writeKey(t, dir, "example.com.", 257, dns.ECDSAP256SHA256, now.Add(-2*time.Hour))
			writeKey(t, dir, "example.com.", 256, dns.ECDSAP256SHA256, now.Add(-time.Hour))
			opts := Options{NSEC: nsec, KeyTTL: 300, PublishWait: 5 * time.Minute}
			s := newSigned(t, mustReadKeys(t, dir), opts, now, testZone)
			checkValidated(t, "whole zone", s, "app.example.com.")

			if _, err := s.Apply(append(Sets(parseZone(t, "new.example.com. 300 IN A 203.0.113.11\nx.y.example.com. 300 IN TXT \"t\"")),
				RRset{Name: "app.example.com.", Type: dns.TypeAAAA}), now); err != nil {
				t.Fatal(err)
			}
			checkValidated(t, "after changes", s, "new.example.com.")

			writeKey(t, dir, "example.com.", 256, dns.ECDSAP256SHA256, now)
			setKeys(t, s, dir, now.Add(time.Minute))
			checkValidated(t, "new ZSK published", s, "x.y.example.com.")
			s.Refresh(now.Add(6 * time.Minute))
			checkValidated(t, "new ZSK signing", s, "app.example.com.")
		})
	}
}

// checkValidated serves s's zone from NSD and fails t unless Unbound,
// trusting the zone's CDS, answers each kind of question securely: name's
// records, a name that does not exist (NXDOMAIN), a type name lacks
// (NODATA), and a name only the wildcard *.apps.example.com covers.
func checkValidated(t *testing.T, step string, s *Signer, name string) {
	t.Helper()
	var zone strings.Builder
	var anchors []string
	for _, rr := range s.Records() {
		zone.WriteString(rr.String() + "\n")
		if cds, ok := rr.(*dns.CDS); ok {
			ds := cds.DS
			ds.Hdr.Rrtype = dns.TypeDS
			anchors = append(anchors, ds.String())
		}
	}
	nsd := nameserver.StartNSDPrimary(t, nameserver.FreeLoopbackAddr(t), s.Origin(), zone.String())
	unbound := nameserver.StartUnbound(t, nameserver.FreeLoopbackAddr(t), s.Origin(), nsd.Addr, anchors...)
	for _, q := range []struct {
		name  string
		qtype uint16
		rcode int
		found bool
	}{
		{name, dns.TypeA, dns.RcodeSuccess, !strings.HasPrefix(name, "x.")},
		{"nothing.example.com.", dns.TypeA, dns.RcodeNameError, false},
		{"b.example.com.", dns.TypeA, dns.RcodeSuccess, false}, // an empty non-terminal
		{"app.example.com.", dns.TypeMX, dns.RcodeSuccess, false},
		{"anything.apps.example.com.", dns.TypeA, dns.RcodeSuccess, true},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		m.SetEdns0(1232, true)
		r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, unbound.Addr)
		switch {
		case err != nil:
			t.Fatalf("%s: %s %s: %v", step, q.name, dns.TypeToString[q.qtype], err)
		case r.Rcode != q.rcode || !r.AuthenticatedData || (len(r.Answer) > 0) != q.found:
			t.Errorf("%s: %s %s: want %s, AD, answer %v; got\n%v\nUnbound:\n%s", step, q.name, dns.TypeToString[q.qtype],
				dns.RcodeToString[q.rcode], q.found, r, unbound.Output())
		}
	}
}
