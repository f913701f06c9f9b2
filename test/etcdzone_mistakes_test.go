package test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// TestEtcdzoneZoneOutsideBlock starts blocks whose etcdzone serves a zone
// that no query of the block reaches (etcd example.org in an example.com
// block, which started and answered SERVFAIL for every name): each stops
// start-up with an error naming etcdzone, the file, the line, the zone and
// the block's zones, before any glue or delegation the zone would hold is
// checked. Blocks that reach every zone of etcdzone start: a
// block of ., one of several zones that etcdzone serves some of, and one
// below the zone.
func TestEtcdzoneZoneOutsideBlock(t *testing.T) {
	etcd := startEtcd(t)
	block := func(key, etcdzone, zones string) string {
		return key + " {\n\tetcdzone" + etcdzone + "\n\tetcd " + zones + " {\n\t\tendpoint " + etcd.Endpoint() + "\n\t}\n}\n"
	}
	for _, tc := range []struct{ corefile, want string }{
		{block("example.com:{port:dns}", "", "example.org"), "zone example.org. of the etcd plugin lies outside the server block's zones [example.com.]: no query of the block reaches it; give etcd the block's zones (etcd example.com.)"},
		{block("example.com:{port:dns}", "", "example.com example.org"), "zone example.org. of the etcd plugin lies outside the server block's zones [example.com.]"},
		{block("example.com:{port:dns} example.net:{port:dns}", "", "example.org"), "zone example.org. of the etcd plugin lies outside the server block's zones [example.com. example.net.]"},
		{block("example.com:{port:dns}", " example.org", "example.com example.org"), "zone example.org. lies outside the server block's zones [example.com.]: no query of the block reaches it; name it in the block's key, or leave it out"},
		// The zone, not its glue, which lies outside it as the block's zone would hold it.
		{block("example.com:{port:dns}", " {\n\t\tns ns1.example.com\n\t\tglue ns1.example.com 192.0.2.53\n\t}", "example.org"), "zone example.org. of the etcd plugin lies outside the server block's zones [example.com.]"},
	} {
		_, err := tryStartCoreDNS(t, tc.corefile)
		if err == nil {
			t.Errorf("started:\n%s", tc.corefile)
			continue
		}
		for _, want := range []string{"plugin/etcdzone", "Corefile:2", tc.want} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	}
	putRecords(t, etcd, a("app.example.com", "192.0.2.51"))
	for _, corefile := range []string{
		block(".:{port:dns}", "", "example.com"),
		block("example.com:{port:dns} 0.168.192.in-addr.arpa:{port:dns}", "", "example.com"),
		block("app.example.com:{port:dns}", "", "example.com"),
	} {
		c := startCoreDNS(t, corefile)
		if err := answers(c.Addr("dns"), "app.example.com.", dns.TypeA, []string{"192.0.2.51"}); err != nil {
			t.Errorf("%v:\n%s", err, corefile)
		}
		c.Stop()
	}
}

// TestEtcdzoneWithoutEtcd starts etcdzone in a block without the etcd
// plugin: start-up stops naming etcdzone, the file and line, and the line
// to add.
func TestEtcdzoneWithoutEtcd(t *testing.T) {
	_, err := tryStartCoreDNS(t, "example.com:{port:dns} example.net:{port:dns} {\n\tetcdzone\n}\n")
	for _, want := range []string{"plugin/etcdzone", "Corefile:2", "no etcd plugin in this server block", "add `etcd example.com. example.net.`"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("start-up: %v, want an error saying %q", err, want)
		}
	}
}

// TestEtcdzoneLoadWarnings starts a block whose etcd plugin reads a path
// external-dns does not write, with a name server inside the zone and no
// glue: CoreDNS starts (an empty zone is right before external-dns writes
// anything), and warns of both, naming the etcd key it read and the glue
// to add; the NS answer carries no address. With the path and glue right,
// neither warning comes, and the NS answer carries the glue.
func TestEtcdzoneLoadWarnings(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.0.2.51"))
	corefile := func(path, glue string) string {
		return "example.com:{port:dns} {\n\tetcdzone {\n\t\tns ns1.example.com ns2.example.net\n" + glue + "\t}\n\tetcd example.com {\n\t\tpath " + path + "\n\t\tendpoint " + etcd.Endpoint() + "\n\t}\n}\n"
	}
	logs := captureLog(t)
	c := startCoreDNS(t, corefile("/wrong", ""))
	// The block's key names the zone: two blocks (two views) may serve it.
	zone := "zone example.com. (block dns://example.com.:" + strconv.Itoa(c.Port("dns")) + ")"
	empty := "[WARNING] plugin/etcdzone: " + zone + " has no record from etcd: etcd (" + etcd.Endpoint() + ") holds no key at or below /wrong/com/example; check that the etcd plugin's zone and path are where external-dns writes"
	noGlue := "[WARNING] plugin/etcdzone: " + zone + " holds no address of its name server ns1.example.com., which lies inside it: NS answers and referrals carry none, and resolvers may not reach it; add its addresses to etcdzone (glue ns1.example.com. ADDRESS...)"
	waitLog(t, logs, empty)
	waitLog(t, logs, noGlue)
	if r := query(t, "udp", c.Addr("dns"), "example.com.", dns.TypeNS); len(r.Answer) != 2 || len(r.Extra) != 0 {
		t.Errorf("NS without glue: want two NS records and no address, got\n%v", r)
	}
	c.Stop()

	logs = captureLog(t)
	c = startCoreDNS(t, corefile("/skydns", "\t\tglue ns1.example.com 192.0.2.10\n"))
	if err := answers(c.Addr("dns"), "app.example.com.", dns.TypeA, []string{"192.0.2.51"}); err != nil {
		t.Fatal(err)
	}
	if r := query(t, "udp", c.Addr("dns"), "example.com.", dns.TypeNS); len(r.Extra) != 1 || r.Extra[0].String() != "ns1.example.com.\t3600\tIN\tA\t192.0.2.10" {
		t.Errorf("NS with glue: want its address in Additional, got\n%v", r)
	}
	if strings.Contains(logs.String(), "[WARNING] plugin/etcdzone: zone example.com.") {
		t.Errorf("a warning with the path and glue right:\n%s", logs)
	}
}

// TestEtcdzoneGlueInExternalView serves, in the external view of a hidden
// primary, the glue of a name server of the zone and of a delegation's,
// with internal addresses: the view shows glue as it shows every address
// (the global address of its family, none without one). No internal
// address leaves: not in the NS answer's or the referral's Additional
// section, not in an AXFR, not in an IXFR after the global addresses
// change, not in the copy of a BIND secondary, which follows the change.
func TestEtcdzoneGlueInExternalView(t *testing.T) {
	bindAddr := nameserver.FreeLoopbackAddr(t)
	corefile := strings.Replace(hiddenPrimaryCorefile, "\t\tns ns1.example.net ns2.example.net\n",
		"\t\tns ns1.example.com ns2.example.net\n\t\tglue ns1.example.com 192.168.0.10 fd00::10\n\t\tdelegate lab.example.com ns1.lab.example.com\n\t\tglue ns1.lab.example.com 192.168.0.53\n", 1)
	primary, etcd, _ := startHiddenPrimaryOf(t, corefile, bindAddr)
	addr := primary.Addr("primary")
	// Hosts of public addresses, which the view keeps, make the change
	// of the global addresses smaller than the zone: an IXFR sends it.
	for i := range 20 {
		putRecords(t, etcd, a(fmt.Sprintf("pub%d.example.com", i), fmt.Sprintf("198.51.100.%d", i)))
	}
	eventually(t, 10*time.Second, "the public hosts", func() error {
		return answers(addr, "pub19.example.com.", dns.TypeA, []string{"198.51.100.19"})
	})
	bind := nameserver.StartBIND(t, bindAddr, nameserver.Primary{Zone: "example.com.", Addr: addr, Key: nameserver.TestKey})

	additional := func(server, name string, qtype uint16, want ...string) {
		t.Helper()
		r := query(t, "udp", server, name, qtype)
		if err := hiddenPrimaryPolicy.Check(r); err != nil {
			t.Errorf("%s %s from %s: %v", name, dns.TypeToString[qtype], server, err)
		}
		var got []string
		for _, rr := range r.Extra {
			if rr.Header().Rrtype != dns.TypeOPT {
				got = append(got, rr.String())
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s %s from %s: Additional\n%s\nwant\n%s", name, dns.TypeToString[qtype], server, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	additional(addr, "example.com.", dns.TypeNS, "ns1.example.com.\t900\tIN\tA\t203.0.113.10", "ns1.example.com.\t900\tIN\tAAAA\t2001:db8::10")
	additional(addr, "host.lab.example.com.", dns.TypeA, "ns1.lab.example.com.\t900\tIN\tA\t203.0.113.10")
	checkTransfer := func() *dns.SOA {
		t.Helper()
		rrs := nameserver.AXFR(t, addr, "example.com.", &nameserver.TestKey)
		for _, rr := range rrs {
			if err := hiddenPrimaryPolicy.CheckRR(rr); err != nil {
				t.Errorf("AXFR: %v", err)
			}
		}
		return rrs[0].(*dns.SOA)
	}
	before := checkTransfer()

	// The global addresses move to one IPv4 address: the IPv6 glue has
	// none of its family, and goes.
	putGlobal(t, etcd, "203.0.113.20")
	eventually(t, 10*time.Second, "the new global address", func() error {
		return answers(addr, "ns1.example.com.", dns.TypeA, []string{"203.0.113.20"})
	})
	changes := ixfr(t, addr, before).Answer
	if len(changes) < 2 || changes[1].Header().Rrtype != dns.TypeSOA {
		t.Errorf("IXFR from %d: want the changes, got\n%v", before.Serial, changes)
	}
	for _, rr := range changes {
		if err := hiddenPrimaryPolicy.CheckRR(rr); err != nil {
			t.Errorf("IXFR: %v", err)
		}
	}
	checkTransfer()
	additional(addr, "example.com.", dns.TypeNS, "ns1.example.com.\t900\tIN\tA\t203.0.113.20")

	eventually(t, 10*time.Second, "BIND's copy", func() error {
		return answers(bind.Addr, "ns1.example.com.", dns.TypeA, []string{"203.0.113.20"})
	})
	checkCopies(t, []*nameserver.Server{bind}, "ns1.example.com.", "ns1.lab.example.com.")
	additional(bind.Addr, "host.lab.example.com.", dns.TypeA, "ns1.lab.example.com.\t900\tIN\tA\t203.0.113.20")
}
