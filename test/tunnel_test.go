package test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/oracle"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// tunnelTarget is the relay's host name the tests' tunnels stand for, in a
// zone of its own (example.net), and relayAddr its address there.
const (
	tunnelTarget = "relay.example.net"
	relayAddr    = "198.51.100.200"
)

// tunnelCorefile is a hidden primary for example.com behind CGNAT: no
// global address, every name with an internal address a CNAME to the
// relay; transferable with TSIG to TO, and signed with DNSSEC where
// DNSSEC stands (empty, or "dnssec KEYFILE"). ETCD stands for etcd's
// endpoint, KEY and SECRET for the TSIG key, NS for the name servers.
const tunnelCorefile = `example.com:{port:primary} {
	prometheus 127.0.0.1:{httpport:metrics}
	tsig {
		secret KEY SECRET
		require AXFR IXFR
	}
	globaladdr {
		tunnel relay.example.net
		ttl 900
		hide secret.example.com
	}
	etcdzone {
		ns NS
		refresh 86400
		retry 86400
		DNSSEC
	}
	transfer {
		to TO
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// startTunnel starts an etcd holding the tunnel tests' records and a
// tunnelCorefile primary notifying to, signed with dnssec (empty: not),
// whose name servers are ns.
func startTunnel(t *testing.T, to, dnssec, ns string) (*coreDNS, *etcdtest.Server) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("example.com", "192.168.0.50"),
		a("app.example.com", "192.168.0.51"),
		aaaa("app.example.com", "fd00::51"),
		a("www.example.com", "198.51.100.80"),
		a("info.example.com", "192.168.0.54"),
		txt("info.example.com", "hello"),
		a("x.apps.example.com", "192.168.0.52"),
		a("*.wild.example.com", "192.168.0.55"),
		a("secret.example.com", "192.168.0.99"),
		a("ns1.example.com", "192.168.0.53", "198.51.100.53"),
		cname("old.example.com", "www.example.com"),
		a("old.example.com", "192.168.0.56"),
	)
	c := startCoreDNS(t, strings.NewReplacer(
		"ETCD", etcd.Endpoint(),
		"TO", to,
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
		"DNSSEC", dnssec,
		"NS", ns,
	).Replace(tunnelCorefile))
	return c, etcd
}

// TestTunnel starts an external view behind CGNAT whose names reach home
// through a relay: over UDP and TCP, a name with an internal address answers
// the CNAME to the relay alone (its TXT records gone with its addresses, a
// wildcard's expansion too), a name with public addresses only answers them,
// the apex and a name server's name (which can't be aliases) show no
// internal address, nor does a name with a CNAME of its own, which keeps it;
// a hidden name does not exist; the CNAMEs count as tunnelled. BIND,
// its secondary, agrees on every question of the zone after the AXFR, and
// after the IXFR a new name brings; Unbound, asking the view and the relay's
// own zone, follows the CNAME to the relay's address.
func TestTunnel(t *testing.T) {
	bindAddr := nameserver.FreeLoopbackAddr(t)
	primary, etcd := startTunnel(t, bindAddr, "", "ns1.example.com ns2.example.net")
	addr := primary.Addr("primary")
	waitServing(t, addr)
	before := scrape(t, "http://"+primary.Addr("metrics")+"/metrics")
	cnameTo := func(name string) dns.RR {
		return test.CNAME(name + " 900 IN CNAME " + tunnelTarget + ".")
	}
	for _, tc := range []test.Case{
		{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{cnameTo("app.example.com.")}},
		{Qname: "app.example.com.", Qtype: dns.TypeAAAA, Answer: []dns.RR{cnameTo("app.example.com.")}},
		{Qname: "info.example.com.", Qtype: dns.TypeTXT, Answer: []dns.RR{cnameTo("info.example.com.")}},
		{Qname: "x.apps.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{cnameTo("x.apps.example.com.")}},
		{Qname: "any.wild.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{cnameTo("any.wild.example.com.")}},
		{Qname: "www.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("www.example.com. 303 IN A 198.51.100.80")}},
		{Qname: "ns1.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("ns1.example.com. 303 IN A 198.51.100.53")}},
		{Qname: "old.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{
			test.CNAME("old.example.com. 303 IN CNAME www.example.com."), test.A("www.example.com. 303 IN A 198.51.100.80")}},
	} {
		checkCase(t, addr, tc)
	}
	after := scrape(t, "http://"+primary.Addr("metrics")+"/metrics")
	// Per network: app's A and AAAA and x.apps's A are tunnelled (a
	// wildcard's expansion is not judged: the name asked holds no
	// records); ns1's, which can't be an alias, and old's, behind its own
	// CNAME, are dropped.
	if got := counted(before, after, "coredns_globaladdr_tunnelled_total", primary.Port("primary"), ""); got != 2*3 {
		t.Errorf("coredns_globaladdr_tunnelled_total counted %v, want 6", got)
	}
	if got := counted(before, after, "coredns_globaladdr_dropped_total", primary.Port("primary"), "A"); got != 2*2 {
		t.Errorf("coredns_globaladdr_dropped_total{type=A} counted %v, want 4: ns1's and old's internal addresses", got)
	}
	for _, network := range networks {
		if r := query(t, network, addr, "example.com.", dns.TypeA); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 {
			t.Errorf("%s: the apex's A: want NODATA, got\n%v", network, r)
		}
		if r := query(t, network, addr, "secret.example.com.", dns.TypeA); r.Rcode != dns.RcodeNameError {
			t.Errorf("%s: the hidden name: want NXDOMAIN, got\n%v", network, r)
		}
	}

	primaryOf := nameserver.Primary{Zone: "example.com.", Addr: addr, Key: nameserver.TestKey}
	names := []string{"example.com.", "ns1.example.com.", "old.example.com.", "app.example.com.", "www.example.com.", "info.example.com.", "x.apps.example.com.", "any.wild.example.com.", "secret.example.com.", "nothing.example.com."}
	oracle.Check(t, bindAddr, primaryOf, names)
	putRecords(t, etcd, a("new.example.com", "192.168.0.60"))
	eventually(t, 10*time.Second, "BIND's IXFR of a new name", func() error {
		return answers(bindAddr, "new.example.com.", dns.TypeCNAME, []string{tunnelTarget + "."})
	})
	if diffs, err := oracle.Compare(addr, bindAddr, oracle.Questions("example.com.", nameserver.AXFR(t, bindAddr, "example.com.", nil), append(names, "new.example.com."))); err != nil || len(diffs) > 0 {
		t.Errorf("after the IXFR: %v %v", err, diffs)
	}

	relay := nameserver.StartPrimary(t, nameserver.FreeLoopbackAddr(t), map[string]string{"example.net.": relayZone})
	unbound := nameserver.StartUnboundStubs(t, nameserver.FreeLoopbackAddr(t), map[string]string{"example.com.": bindAddr, "example.net.": relay.Addr})
	eventually(t, 10*time.Second, "Unbound following the CNAME", func() error {
		return answers(unbound.Addr, "app.example.com.", dns.TypeA, []string{relayAddr})
	})
}

// relayZone is the relay's own zone, as its operator serves it.
const relayZone = `example.net. 3600 IN SOA ns1.example.net. hostmaster.example.net. 1 3600 600 1209600 300
example.net. 3600 IN NS ns1.example.net.
ns1.example.net. 3600 IN A 198.51.100.53
relay.example.net. 300 IN A ` + relayAddr + `
`

// TestTunnelSigned signs the tunnel's zone: DNSViz, told of the relay's own
// zone (served signed beside it, so that it asks no root server), finds no
// error in the CNAMEs that stand for names' addresses, a wildcard's
// included, nor in the denials; Unbound, trusting the zone's key,
// validates the CNAME, the denial of the apex's A records the tunnel left
// out, and a name that does not exist; the CNAME's RRSIG verifies with the
// key.
func TestTunnelSigned(t *testing.T) {
	key, keyFile := writeKey(t, "example.com.")
	primary, _ := startTunnel(t, nameserver.FreeLoopbackAddr(t), "dnssec "+keyFile, "ns1.example.com ns2.example.net")
	addr := primary.Addr("primary")
	waitServing(t, addr)
	m := new(dns.Msg)
	m.SetQuestion("app.example.com.", dns.TypeA)
	m.SetEdns0(4096, true)
	r := exchange(t, "udp", addr, m)
	verifySignatures(t, key, r.Answer)

	relayKey, relayKeyFile := writeKey(t, "example.net.")
	zoneFile := filepath.Join(t.TempDir(), "example.net")
	writeTestFile(t, zoneFile, relayZone)
	relay := startCoreDNS(t, "example.net:{port:dns} {\n\tfile "+zoneFile+"\n\tdnssec {\n\t\tkey file "+relayKeyFile+"\n\t}\n}\n")
	relayZone := signedZone{name: "example.net", addr: relay.Addr("dns"), key: relayKey}
	checkDNSViz(t, prereq.Program(t, "dnsviz", "dnsviz"), addr, key, []signedZone{relayZone}, "app.example.com", "x.apps.example.com", "example.com", "nothing.example.com")
	unbound := nameserver.StartUnbound(t, nameserver.FreeLoopbackAddr(t), "example.com.", addr, dsOf(key))
	for _, q := range []struct {
		name  string
		qtype uint16
		rcode int
		found bool
	}{
		{"app.example.com.", dns.TypeCNAME, dns.RcodeSuccess, true},
		{"x.apps.example.com.", dns.TypeCNAME, dns.RcodeSuccess, true},
		{"example.com.", dns.TypeA, dns.RcodeSuccess, false},
		{"nothing.example.com.", dns.TypeA, dns.RcodeNameError, false},
	} {
		if err := secure(unbound.Addr, q.name, q.qtype, q.rcode, q.found); err != nil {
			t.Error(err)
		}
	}
}

// tunnelRefusals are Corefiles whose tunnel start-up refuses, with what the
// error says.
var tunnelRefusals = []struct{ corefile, want string }{
	{"example.com:{port:dns} {\n\tglobaladdr {\n\t\ttunnel relay.example.com\n\t}\n\tetcdzone {\n\t\tns ns1.example.net\n\t}\n\tetcd example.com {\n\t\tendpoint ETCD\n\t}\n}\n",
		`"relay.example.com.": the tunnel is inside example.com., which this block serves`},
	{"example.com:{port:dns} {\n\tglobaladdr {\n\t\ttunnel relay.example.net\n\t}\n\tetcd example.com {\n\t\tendpoint ETCD\n\t}\n}\n",
		`no etcdzone in this server block`},
	{"example.com:{port:dns} {\n\tglobaladdr {\n\t\ttunnel relay.example.net\n\t}\n\tetcdzone example.com {\n\t\tns ns1.example.net\n\t}\n\tetcd example.com example.org {\n\t\tendpoint ETCD\n\t}\n}\n",
		`the etcd plugin answers example.org.`},
}

// TestTunnelRefused starts CoreDNS with each of tunnelRefusals: it stops,
// naming the plugin, the Corefile's file and line, and the token.
func TestTunnelRefused(t *testing.T) {
	etcd := startEtcd(t)
	for _, tc := range tunnelRefusals {
		_, err := tryStartCoreDNS(t, strings.ReplaceAll(tc.corefile, "ETCD", etcd.Endpoint()))
		for _, want := range []string{"plugin/globaladdr", "Corefile:3", tc.want} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("start-up: %v, want an error saying %q", err, want)
			}
		}
	}
}
