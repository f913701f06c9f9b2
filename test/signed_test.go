package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/signer"

	"github.com/miekg/dns"
)

// startSignedPrimary starts the hidden primary of hiddenPrimaryCorefile
// signing with keys (key file prefixes or a directory of key files), with
// the etcdzone properties extra, notifying to. It returns the primary's
// etcd too.
func startSignedPrimary(t testing.TB, keys, extra string, to ...string) (*coreDNS, *etcdtest.Server) {
	t.Helper()
	corefile := strings.Replace(hiddenPrimaryCorefile, "\t\tretry 86400\n", "\t\tretry 86400\n\t\tdnssec "+keys+"\n"+extra, 1)
	primary, etcd, _ := startHiddenPrimaryOf(t, corefile, to...)
	return primary, etcd
}

// startSignedNSD starts a signing hidden primary (see startSignedPrimary)
// whose zone has the wildcard *.apps.example.com too, and an NSD secondary
// of it, and waits until NSD serves the signed zone.
func startSignedNSD(t testing.TB, keys, extra string) (*etcdtest.Server, *nameserver.Server) {
	t.Helper()
	nsdAddr := nameserver.FreeLoopbackAddr(t)
	primary, etcd := startSignedPrimary(t, keys, extra, nsdAddr)
	putRecords(t, etcd, a("*.apps.example.com", "192.168.0.80"))
	nsd := nameserver.StartNSD(t, nsdAddr, nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey})
	poll.Until(t, 10*time.Second, "NSD's signed zone", func() error {
		return signedAnswer(nsd.Addr, "x.apps.example.com.", dns.TypeA, "203.0.113.10")
	})
	return etcd, nsd
}

// signedQuery asks addr for name's records of qtype with DO set, over TCP.
func signedQuery(addr, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(4096, true)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
	return r, err
}

// signedAnswer returns nil when addr answers name's records of qtype with
// want among them, signed (an RRSIG covering qtype).
func signedAnswer(addr, name string, qtype uint16, want string) error {
	r, err := signedQuery(addr, name, qtype)
	if err != nil {
		return err
	}
	found, signed := false, false
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == qtype && strings.Contains(rr.String(), want) {
			found = true
		}
		if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == qtype {
			signed = true
		}
	}
	if !found || !signed {
		return fmt.Errorf("%s %s: want %s signed, got\n%v", name, dns.TypeToString[qtype], want, r)
	}
	return nil
}

// dsOf returns key's DS record (SHA-256) as a trust anchor's text.
func dsOf(key *dns.DNSKEY) string { return key.ToDS(dns.SHA256).String() }

// verifyCopy transfers the zone from s and fails t unless BIND's
// dnssec-verify finds it fully and correctly signed (-z: by a CSK alone, or
// a KSK and a ZSK).
func verifyCopy(t *testing.T, s *nameserver.Server) {
	t.Helper()
	verify := prereq.Program(t, "dnssec-verify", "bind9-utils")
	var text strings.Builder
	for _, rr := range nameserver.AXFR(t, s.Addr, "example.com.", nil) {
		text.WriteString(rr.String() + "\n")
	}
	file := filepath.Join(t.TempDir(), "example.com.zone")
	if err := os.WriteFile(file, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(verify, "-z", "-o", "example.com.", file).CombinedOutput(); err != nil {
		t.Errorf("%s's copy: dnssec-verify: %v\n%s", s.Name, err, out)
	}
}

// validated fails t unless the validating resolver at addr answers each of
// the lab's kinds of question securely (AD): an existing name, one that
// does not exist, an empty non-terminal, a type a name lacks, and a
// wildcard's expansion.
func validated(t *testing.T, step, addr string) {
	t.Helper()
	for _, q := range []struct {
		name  string
		qtype uint16
		rcode int
		found bool
	}{
		{"app.example.com.", dns.TypeA, dns.RcodeSuccess, true},
		{"nothing.example.com.", dns.TypeA, dns.RcodeNameError, false},
		{"y.example.com.", dns.TypeA, dns.RcodeSuccess, false},
		{"app.example.com.", dns.TypeMX, dns.RcodeSuccess, false},
		{"anything.apps.example.com.", dns.TypeA, dns.RcodeSuccess, true},
	} {
		if err := secure(addr, q.name, q.qtype, q.rcode, q.found); err != nil {
			t.Errorf("%s: %v", step, err)
		}
	}
}

// secure returns nil when the resolver at addr answers name's records of
// qtype with rcode and AD set, with records of qtype or (found false)
// none.
func secure(addr, name string, qtype uint16, rcode int, found bool) error {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(1232, true)
	r, _, err := (&dns.Client{Timeout: 5 * time.Second}).Exchange(m, addr)
	if err != nil {
		return fmt.Errorf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	has := false
	for _, rr := range r.Answer {
		has = has || rr.Header().Rrtype == qtype
	}
	if r.Rcode != rcode || !r.AuthenticatedData || has != found {
		return fmt.Errorf("%s %s: want %s, AD, records %v; got\n%v", name, dns.TypeToString[qtype], dns.RcodeToString[rcode], found, r)
	}
	return nil
}

// TestSignedPrimarySecondaries has BIND, NSD (which cannot sign) and Knot
// transfer the zone of a hidden primary that signs it: BIND's dnssec-verify
// passes on each copy; Unbound, trusting the key's DS, validates what the
// NSD secondary answers (existing names, NXDOMAIN, NODATA, an empty
// non-terminal, a wildcard); a change in etcd is answered signed by the
// primary and by NSD, and its IXFR carries the changed RRsets and NSEC3
// records, not the zone.
func TestSignedPrimarySecondaries(t *testing.T) {
	key, keyFile := writeKey(t, "example.com.")
	bindAddr, nsdAddr, knotAddr := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	primary, etcd := startSignedPrimary(t, keyFile, "", bindAddr, nsdAddr, knotAddr)
	putRecords(t, etcd, a("*.apps.example.com", "192.168.0.80"))
	ref := nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey}
	secondaries := []*nameserver.Server{nameserver.StartBIND(t, bindAddr, ref), nameserver.StartNSD(t, nsdAddr, ref), nameserver.StartKnot(t, knotAddr, ref)}
	for _, s := range secondaries {
		eventually(t, 10*time.Second, s.Name+": the signed zone", func() error {
			return signedAnswer(s.Addr, "x.apps.example.com.", dns.TypeA, "203.0.113.10")
		})
		verifyCopy(t, s)
	}
	checkCopies(t, secondaries, "app.example.com.", "www.example.com.", "x.y.example.com.")

	nsd := secondaries[1]
	unbound := nameserver.StartUnbound(t, nameserver.FreeLoopbackAddr(t), "example.com.", nsd.Addr, dsOf(key))
	validated(t, "first transfer", unbound.Addr)

	soa := query(t, "udp", primary.Addr("primary"), "example.com.", dns.TypeSOA).Answer[0].(*dns.SOA)
	start := time.Now()
	putRecords(t, etcd, a("new.example.com", "192.168.0.61"))
	eventually(t, 2*time.Second, "the primary's signed answer", func() error {
		return signedAnswer(primary.Addr("primary"), "new.example.com.", dns.TypeA, "203.0.113.10")
	})
	t.Logf("the change answered signed by the primary after %v", time.Since(start))
	eventually(t, 4*time.Second, "NSD's signed answer", func() error {
		return signedAnswer(nsd.Addr, "new.example.com.", dns.TypeA, "203.0.113.10")
	})
	t.Logf("the change answered signed by NSD after %v", time.Since(start))
	if err := secure(unbound.Addr, "new.example.com.", dns.TypeA, dns.RcodeSuccess, true); err != nil {
		t.Error(err)
	}
	for _, s := range secondaries {
		verifyCopy(t, s)
	}
	checkIXFR(t, primary.Addr("primary"), soa)
}

// checkIXFR fails t unless the primary's IXFR from soa's serial (its first
// message: the change is small) carries the change of new.example.com (its
// A record and RRSIG) and NSEC3 records, and far fewer records than the
// zone.
func checkIXFR(t *testing.T, addr string, soa *dns.SOA) {
	t.Helper()
	r := ixfr(t, addr, soa)
	rrs := r.Answer
	zone := len(nameserver.AXFR(t, addr, "example.com.", &nameserver.TestKey))
	var a, sig, nsec3 bool
	for _, rr := range rrs {
		switch rr := rr.(type) {
		case *dns.A:
			a = a || rr.Hdr.Name == "new.example.com."
		case *dns.RRSIG:
			sig = sig || rr.Hdr.Name == "new.example.com."
		case *dns.NSEC3:
			nsec3 = true
		}
	}
	if !a || !sig || !nsec3 || len(rrs) > zone/2 {
		t.Errorf("IXFR from %d: %d records (the zone %d), new A %v, its RRSIG %v, NSEC3 %v:\n%v", soa.Serial, len(rrs), zone, a, sig, nsec3, r)
	}
}

// TestSignedPrimaryRefresh signs with a validity of 40 s, refreshed when 25
// s are left: Unbound, asking the NSD secondary all along (it keeps nothing
// longer than a second; nor does it take a signature past its expiry),
// answers securely for 70 s, and NSD's signatures are never about to
// expire, also while etcd is down for 46 s, longer than a validity.
func TestSignedPrimaryRefresh(t *testing.T) {
	t.Parallel() // it waits on the clock, for signatures to expire and be refreshed
	key, keyFile := writeKey(t, "example.com.")
	etcd, nsd := startSignedNSD(t, keyFile, "\t\tdnssec_validity 40s\n\t\tdnssec_refresh 25s\n\t\tdnssec_jitter 3s\n")
	unbound := nameserver.StartUnbound(t, nameserver.FreeLoopbackAddr(t), "example.com.", nsd.Addr, dsOf(key))
	first := soaSerial(t, nsd.Addr, "example.com.")
	for i := 0; time.Duration(i)*2*time.Second < 70*time.Second; i++ {
		switch i {
		case 7:
			etcd.Stop()
			t.Log("etcd stopped")
		case 30:
			if err := etcd.Restart(); err != nil {
				t.Fatal(err)
			}
			t.Log("etcd restarted")
		}
		validated(t, fmt.Sprintf("after %d s", 2*i), unbound.Addr)
		if err := fresh(nsd.Addr); err != nil {
			t.Errorf("after %d s: %v", 2*i, err)
		}
		time.Sleep(2 * time.Second) // the clock is what this test is about
	}
	if s := soaSerial(t, nsd.Addr, "example.com."); !serialNewer(s, first) {
		t.Errorf("NSD's serial %d after the refreshes, %d before", s, first)
	}
}

// fresh returns nil when addr's signature of app.example.com's A record
// is valid for more than a few seconds yet.
func fresh(addr string) error {
	r, err := signedQuery(addr, "app.example.com.", dns.TypeA)
	if err != nil {
		return err
	}
	for _, rr := range r.Answer {
		if sig, ok := rr.(*dns.RRSIG); ok && !sig.ValidityPeriod(time.Now().Add(3*time.Second)) {
			return fmt.Errorf("a signature that expires at %v:\n%v", time.Unix(int64(sig.Expiration), 0), sig)
		}
	}
	return nil
}

// writeKeyIn writes a key of zone with flags (256 ZSK, 257 KSK) into dir,
// as dnssec-keygen names it, and returns it with its files' prefix.
func writeKeyIn(t *testing.T, dir, zone string, flags uint16) (*dns.DNSKEY, string) {
	t.Helper()
	key := &dns.DNSKEY{
		Hdr:       dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags:     flags,
		Protocol:  3,
		Algorithm: dns.ECDSAP256SHA256,
	}
	priv, err := key.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, fmt.Sprintf("K%s+%03d+%05d", zone, key.Algorithm, key.KeyTag()))
	created := "Created: " + time.Now().UTC().Format("20060102150405") + "\n"
	if err := os.WriteFile(base+".private", []byte(key.PrivateKeyString(priv)+created), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".key", []byte(key.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return key, base
}

// TestSignedPrimaryZSKRollover rolls the ZSK by files while Unbound keeps
// asking the NSD secondary: a new ZSK's files added beside the old one's
// are published, then sign; the old one's removed retire it. No answer is
// SERVFAIL or insecure at any point.
func TestSignedPrimaryZSKRollover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ksk, _ := writeKeyIn(t, dir, "example.com.", 257)
	_, oldZSK := writeKeyIn(t, dir, "example.com.", 256)
	_, nsd := startSignedNSD(t, dir, "\t\tttl 2\n\t\tdnssec_validity 1h\n\t\tdnssec_refresh 10s\n\t\tdnssec_jitter 1s\n")
	unbound := nameserver.StartUnbound(t, nameserver.FreeLoopbackAddr(t), "example.com.", nsd.Addr, dsOf(ksk))
	validated(t, "before", unbound.Addr)

	// The resolver keeps asking, every 100 ms, until the rollover is done.
	done := make(chan struct{})
	var asked sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	asked.Add(1)
	go func() {
		defer asked.Done()
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if err := secure(unbound.Addr, "app.example.com.", dns.TypeA, dns.RcodeSuccess, true); err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
			}
		}
	}()

	newKey, _ := writeKeyIn(t, dir, "example.com.", 256)
	eventually(t, 20*time.Second, "the new ZSK published at NSD", func() error { return dnskeys(nsd.Addr, 3) })
	eventually(t, 20*time.Second, "the new ZSK signing at NSD", func() error { return signedBy(nsd.Addr, newKey.KeyTag()) })
	validated(t, "new ZSK signing", unbound.Addr)
	for _, ext := range []string{".key", ".private"} {
		if err := os.Remove(oldZSK + ext); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "the old ZSK retired at NSD", func() error { return dnskeys(nsd.Addr, 2) })
	time.Sleep(3 * time.Second) // the resolver goes on asking past the DNSKEY TTL
	close(done)
	asked.Wait()
	validated(t, "after", unbound.Addr)
	verifyCopy(t, nsd)
	for _, err := range failures {
		t.Error(err)
	}
}

// dnskeys returns nil when addr publishes n DNSKEY records of example.com.
func dnskeys(addr string, n int) error {
	r, err := signedQuery(addr, "example.com.", dns.TypeDNSKEY)
	if err != nil {
		return err
	}
	got := 0
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == dns.TypeDNSKEY {
			got++
		}
	}
	if got != n {
		return fmt.Errorf("%d DNSKEY records, want %d", got, n)
	}
	return nil
}

// signedBy returns nil when addr's A record of app.example.com is signed by
// the key of tag alone.
func signedBy(addr string, tag uint16) error {
	r, err := signedQuery(addr, "app.example.com.", dns.TypeA)
	if err != nil {
		return err
	}
	var tags []uint16
	for _, rr := range r.Answer {
		if sig, ok := rr.(*dns.RRSIG); ok {
			tags = append(tags, sig.KeyTag)
		}
	}
	if len(tags) != 1 || tags[0] != tag {
		return fmt.Errorf("app.example.com A signed by %v, want %d", tags, tag)
	}
	return nil
}

// TestSignedPrimaryStartErrors checks that a signed zone that can't be
// signed stops CoreDNS from starting, with an error naming etcdzone, the
// Corefile's line, the property and what is wrong.
func TestSignedPrimaryStartErrors(t *testing.T) {
	etcd := startEtcd(t)
	_, otherZone := writeKey(t, "example.org.")
	empty := t.TempDir()
	for _, c := range []struct{ properties, want string }{
		{"dnssec " + empty, "Corefile:4: dnssec " + empty + ": zone example.com.: no key of the zone"},
		{"dnssec " + otherZone, "Corefile:4: dnssec " + otherZone + ": zone example.com.: no key of the zone"},
		{"ds lab.example.com 12345 13 2 6A2B0C1E5D7F3A4B9C8D7E6F5A4B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B", "Corefile:4: ds needs dnssec"},
		{"dnssec " + otherZone + "\n\t\tdnssec_validity 1h\n\t\tdnssec_refresh 2h", "Corefile:6: dnssec_validity, dnssec_refresh, dnssec_jitter: validity 1h0m0s must exceed refresh"},
	} {
		corefile := fmt.Sprintf("example.com:{port:dns} {\n\tetcdzone {\n\t\tns ns1.example.net\n\t\t%s\n\t}\n\tetcd example.com {\n\t\tendpoint %s\n\t}\n}\n", c.properties, etcd.Endpoint())
		_, err := tryStartCoreDNS(t, corefile)
		if err == nil || !strings.Contains(err.Error(), "plugin/etcdzone: "+c.want) {
			t.Errorf("%s: want an error naming etcdzone and %q, got %v", c.properties, c.want, err)
		}
	}
}

// TestSignedPrimaryDNSViz has DNSViz analyze the signed zone as the NSD
// secondary of a signing hidden primary serves it, with the key as trust
// anchor: no error, and secure answers (an address, a CNAME, a wildcard, an
// empty non-terminal, a missing name).
func TestSignedPrimaryDNSViz(t *testing.T) {
	dnsviz := prereq.Program(t, "dnsviz", "dnsviz")
	key, keyFile := writeKey(t, "example.com.")
	_, nsd := startSignedNSD(t, keyFile, "")
	checkDNSViz(t, dnsviz, nsd.Addr, key, nil, "example.com", "app.example.com", "alias.example.com", "x.apps.example.com", "y.example.com", "nothing.example.com")
}

// TestSignedPrimaryLabChain validates the zone of a signing hidden primary
// from a lab root down: a signed root holds com's DS, a signed com holds
// example.com's DS (the hidden primary's key), and the NSD secondary
// serves example.com. Unbound, trusting only the root's key, answers an
// existing name, NXDOMAIN, NODATA, an empty non-terminal and a wildcard's
// expansion securely (AD).
func TestSignedPrimaryLabChain(t *testing.T) {
	key, keyFile := writeKey(t, "example.com.")
	_, nsd := startSignedNSD(t, keyFile, "")
	com, comKey := signedLabZone(t, "com.", "com. 3600 IN NS a.gtld-servers.net.\nexample.com. 3600 IN NS ns1.example.net.\n"+dsOf(key))
	root, rootKey := signedLabZone(t, ".", ". 3600 IN NS a.root-servers.net.\na.root-servers.net. 3600 IN A 127.0.0.1\ncom. 3600 IN NS a.gtld-servers.net.\n"+dsOf(comKey))
	rootNSD := nameserver.StartNSDPrimary(t, nameserver.FreeLoopbackAddr(t), ".", root)
	comNSD := nameserver.StartNSDPrimary(t, nameserver.FreeLoopbackAddr(t), "com.", com)
	unbound := nameserver.StartUnboundStubs(t, nameserver.FreeLoopbackAddr(t),
		map[string]string{".": rootNSD.Addr, "com.": comNSD.Addr, "example.com.": nsd.Addr}, dsOf(rootKey))
	validated(t, "from the lab root", unbound.Addr)
	if t.Failed() {
		t.Logf("Unbound:\n%s", unbound.Output())
	}
}

// signedLabZone returns the zone origin of records (zone-file lines, a SOA
// added) signed by the signer with a new key, as zone-file text, and the
// key.
func signedLabZone(t *testing.T, origin, records string) (string, *dns.DNSKEY) {
	t.Helper()
	key, prefix := writeKey(t, origin)
	k, err := signer.ReadKey(prefix)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(origin, []*signer.Key{k}, signer.Options{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	zp := dns.NewZoneParser(strings.NewReader(origin+" 3600 IN SOA a.root-servers.net. hostmaster.root-servers.net. 1 3600 600 1209600 300\n"+records), origin, "")
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(signer.Sets(rrs), time.Now()); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, rr := range s.Records() {
		text.WriteString(rr.String() + "\n")
	}
	return text.String(), key
}
