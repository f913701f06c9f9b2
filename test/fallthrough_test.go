package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
)

// fallthroughCorefile serves example.com from etcd (ETCD) with etcdzone's
// fallthrough, the etcd plugin left bare (its default endpoint, as the
// examples leave it), in three blocks:
//
//   - lan: a file zone (DB) answers the names etcd lacks;
//   - lan-router: forward answers them, from router, a block that stands
//     for the LAN's router;
//   - external: globaladdr over etcdzone, the file zone answering the names
//     etcd lacks, rewritten as any other backend's answers.
const fallthroughCorefile = `
example.com:{port:lan} {
	etcdzone {
		ns ns1.example.com
		fallthrough
		endpoint ETCD
	}
	etcd example.com
	transfer {
		to *
	}
	file DB example.com
}

example.com:{port:lan-router} {
	etcdzone {
		fallthrough
		endpoint ETCD
	}
	etcd example.com
	forward . 127.0.0.1:{port:router}
}

.:{port:router} {
	hosts {
		192.168.0.1 router.example.com
	}
}

example.com:{port:external} {
	globaladdr 203.0.113.10 {
		hide lan.example.com
	}
	etcdzone {
		ns ns1.example.com
		fallthrough
		endpoint ETCD
	}
	etcd example.com
	file DB example.com
}
`

// fallthroughZone is the file zone beside etcd: names etcd lacks, with
// internal addresses (a printer, a hidden host), one with a public
// address, and app.example.com, which etcd holds too.
const fallthroughZone = `$ORIGIN example.com.
@	300 IN SOA ns.file.example.com. hostmaster.example.com. 7 3600 600 86400 60
@	300 IN NS ns.file.example.com.
printer	300 IN A 192.168.0.20
printer	300 IN AAAA fd00::20
pub	300 IN A 198.51.100.7
host.lan	300 IN A 192.168.0.30
app	300 IN A 192.168.0.99
`

// startFallthrough starts etcd with app.example.com, a wildcard and a deep
// name, and a CoreDNS serving fallthroughCorefile.
func startFallthrough(t *testing.T) *coreDNS {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", "192.168.0.51"),
		a("*.apps.example.com", "192.168.0.80"),
		a("a.b.deep.example.com", "192.168.0.90"),
	)
	db := filepath.Join(t.TempDir(), "db.example.com")
	if err := os.WriteFile(db, []byte(fallthroughZone), 0o644); err != nil {
		t.Fatal(err)
	}
	return startCoreDNS(t, strings.NewReplacer("ETCD", etcd.Endpoint(), "DB", db).Replace(fallthroughCorefile))
}

// TestEtcdzoneFallthroughLAN asks a LAN block with etcdzone's fallthrough
// for names etcd holds and names it lacks: etcd's are answered from the
// zone, wildcards, empty non-terminals and NODATA included; a name etcd
// lacks goes to the file zone, or to the router through forward, past the
// etcd plugin (whose default endpoint holds nothing). A transfer holds
// etcd's records only.
func TestEtcdzoneFallthroughLAN(t *testing.T) {
	c := startFallthrough(t)
	lan, router := c.Addr("lan"), c.Addr("lan-router")
	fileSOA := test.SOA("example.com. 300 IN SOA ns.file.example.com. hostmaster.example.com. 7 3600 600 86400 60")
	fileNS := []dns.RR{test.NS("example.com. 300 IN NS ns.file.example.com.")}
	for _, tc := range []test.Case{
		{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("app.example.com. 300 IN A 192.168.0.51")}},
		{Qname: "x.apps.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("x.apps.example.com. 300 IN A 192.168.0.80")}},
		{Qname: "printer.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("printer.example.com. 300 IN A 192.168.0.20")}, Ns: fileNS},
		{Qname: "printer.example.com.", Qtype: dns.TypeAAAA, Answer: []dns.RR{test.AAAA("printer.example.com. 300 IN AAAA fd00::20")}, Ns: fileNS},
		{Qname: "nothing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{fileSOA}},
	} {
		checkCase(t, lan, tc)
	}
	// etcd's names: the zone's answers, never the file's.
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"deep.example.com.", dns.TypeA}, {"app.example.com.", dns.TypeMX}, {"x.apps.example.com.", dns.TypeTXT}} {
		r := query(t, "udp", lan, q.name, q.qtype)
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 || len(r.Ns) != 1 || r.Ns[0].(*dns.SOA).Ns == "ns.file.example.com." {
			t.Errorf("%s %s: want etcdzone's NODATA\n%v", q.name, dns.TypeToString[q.qtype], r)
		}
	}

	checkCase(t, router, test.Case{Qname: "router.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("router.example.com. 3600 IN A 192.168.0.1")}})
	checkCase(t, router, test.Case{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("app.example.com. 300 IN A 192.168.0.51")}})

	owners := map[string]bool{}
	for _, rr := range nameserver.AXFR(t, lan, "example.com.", nil) {
		owners[rr.Header().Name] = true
	}
	if !owners["app.example.com."] || owners["printer.example.com."] {
		t.Errorf("the transfer holds %v: want etcd's names, not the file's", owners)
	}
}

// TestEtcdzoneFallthroughExternal asks the external view for names etcd
// lacks, which the file zone answers with internal addresses: globaladdr
// rewrites them as it rewrites any backend's, and a hidden name is
// NXDOMAIN; no reply shows an internal address or a hidden name.
func TestEtcdzoneFallthroughExternal(t *testing.T) {
	c := startFallthrough(t)
	ext := c.Addr("external")
	fileSOA := test.SOA("example.com. 300 IN SOA ns.file.example.com. hostmaster.example.com. 7 3600 600 86400 60")
	fileNS := []dns.RR{test.NS("example.com. 300 IN NS ns.file.example.com.")}
	policy := &viewcheck.Policy{Internal: viewcheck.DefaultInternal, Hide: []string{"lan.example.com."}}
	noLeak := func(t *testing.T, m *dns.Msg) {
		if err := policy.Check(m); err != nil {
			t.Errorf("%s: %v", m.Question[0].Name, err)
		}
	}
	for _, tc := range []test.Case{
		{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("app.example.com. 300 IN A 203.0.113.10")}},
		{Qname: "printer.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("printer.example.com. 300 IN A 203.0.113.10")}, Ns: fileNS},
		{Qname: "printer.example.com.", Qtype: dns.TypeAAAA, Ns: []dns.RR{fileSOA}},
		{Qname: "pub.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("pub.example.com. 300 IN A 198.51.100.7")}, Ns: fileNS},
		{Qname: "nothing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{fileSOA}},
	} {
		checkCase(t, ext, tc, noLeak)
	}
	for _, qtype := range []uint16{dns.TypeA, dns.TypeANY, dns.TypeAAAA} {
		r := query(t, "udp", ext, "host.lan.example.com.", qtype)
		noLeak(t, r)
		if r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 || len(r.Ns) != 1 || r.Ns[0].(*dns.SOA).Ns != "ns1.example.com." {
			t.Errorf("host.lan.example.com %s, hidden: want NXDOMAIN with etcdzone's SOA\n%v", dns.TypeToString[qtype], r)
		}
	}
}
