package test

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/viewcheck"

	"github.com/miekg/dns"
)

// viewPolicies are what the external views of viewsCorefile must never show:
// its internal ranges (the default ones and the sources of its maps) and its
// hidden names.
var viewPolicies = map[string]*viewcheck.Policy{
	"external": {
		Internal: append(viewcheck.MustPrefixes("192.168.0.99", "10.20.0.0/24", "fd00:20::/64"), viewcheck.DefaultInternal...),
		Hide:     []string{"secret.example.com", "db.svc.example.com"},
	},
	"external4": {Internal: viewcheck.DefaultInternal},
}

// allTypes are the query types the leak tests ask for every name.
var allTypes = []uint16{
	dns.TypeA, dns.TypeAAAA, dns.TypeANY, dns.TypeTXT, dns.TypeSRV, dns.TypeCNAME,
	dns.TypeMX, dns.TypeNS, dns.TypeSOA, dns.TypePTR,
}

// checkLeak fails t when reply, the answer of the view judged by p to q,
// shows what the view must not.
func checkLeak(t testing.TB, p *viewcheck.Policy, view string, q dns.Question, reply *dns.Msg) {
	t.Helper()
	if err := p.Check(reply); err != nil {
		t.Errorf("%s view, %s %s: %v\n%v", view, q.Name, dns.TypeToString[q.Qtype], err, reply)
	}
}

// ancestorRecords is a zone whose ancestors' merged answers would show, if
// the external view let them through, ownership records, hidden names (as
// owners, SRV targets, CNAME targets and Additional records) and internal
// addresses.
var ancestorRecords = []externaldns.Record{
	a("app.example.com", "192.168.0.51"),
	aaaa("app.example.com", "fd00::51"),
	a("web.svc.example.com", "192.168.0.81"),
	a("db.svc.example.com", "198.51.100.82"),
	aaaa("db.svc.example.com", "fd00::82"),
	a("pub.secret.example.com", "198.51.100.77"),
	a("x.y.secret.example.com", "192.168.0.70"),
	txt("note.secret.example.com", "secret note"),
	cname("alias.example.com", "db.svc.example.com"),
	cname("www.team.example.com", "x.y.secret.example.com"),
	a("mapped.team.example.com", "10.20.0.7"),
	txt("team.example.com", "v=spf1 -all"),
}

// TestAncestorQueriesLeakNothing asks the external views every type at every
// ancestor of the zone's names (the apex, empty non-terminals, wildcards),
// where the etcd plugin merges a whole subtree into one answer, and at
// hidden names in other letter cases: no reply may show an ownership record,
// a hidden name or an internal address. The internal view, asked the same,
// must show them: the questions do reach that data.
func TestAncestorQueriesLeakNothing(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{}, ancestorRecords...)
	names := []string{
		"example.com.", "svc.example.com.", "team.example.com.", "*.example.com.", "*.svc.example.com.",
		"*.secret.example.com.", "SECRET.example.com.", "y.SeCrEt.Example.COM.", "DB.svc.example.com.",
	}
	leaks := 0
	for _, name := range names {
		for _, qtype := range allTypes {
			for _, network := range networks {
				q := dns.Question{Name: name, Qtype: qtype, Qclass: dns.ClassINET}
				for view, p := range viewPolicies {
					checkLeak(t, p, view, q, query(t, network, c.Addr(view), name, qtype))
				}
				if viewPolicies["external"].Check(query(t, network, c.Addr("internal"), name, qtype)) != nil {
					leaks++
				}
			}
		}
	}
	if leaks == 0 {
		t.Error("the internal view showed nothing the external one must hide: the questions miss the data")
	}
}

// TestAncestorAnswersStillShow pins what an external client can still learn
// from ancestors' merged answers (see the plugin README, Bugs): records the
// backend merged under an ancestor's name can no longer be told apart, so a
// hidden host's public address and a hidden name's TXT text come out under
// the ancestor's name; the SRV weights of an ancestor count the hidden
// hosts; external-dns's registry names of a hidden name are its siblings,
// not below it, and exist. If one of these cases fails because the hole was
// closed, update the README.
func TestAncestorAnswersStillShow(t *testing.T) {
	t.Parallel()
	c, _ := startViews(t, directives{}, ancestorRecords...)
	runCases(t, c, []viewCase{
		{"a hidden host's public address under the apex", "external", test.Case{
			Qname: "example.com.", Qtype: dns.TypeA,
			Answer: []dns.RR{ // 303: any TTL
				test.A("example.com. 303 IN A 203.0.113.10"),
				test.A("example.com. 303 IN A 198.51.100.7"),  // mapped.team.example.com, mapped
				test.A("example.com. 303 IN A 198.51.100.77"), // pub.secret.example.com, hidden
				test.A("example.com. 303 IN A 198.51.100.82"), // db.svc.example.com, hidden
			},
		}},
		{"a hidden name's TXT text under the apex", "external", test.Case{
			Qname: "example.com.", Qtype: dns.TypeTXT,
			Answer: []dns.RR{
				test.TXT(`example.com. 300 IN TXT "secret note"`), // note.secret.example.com, hidden
				test.TXT(`example.com. 300 IN TXT "v=spf1 -all"`),
			},
		}},
		{"SRV weights count the hidden hosts", "external", test.Case{
			Qname: "svc.example.com.", Qtype: dns.TypeSRV,
			// 33: one third, for web's A and db's A and AAAA.
			Answer: []dns.RR{test.SRV("svc.example.com. 300 IN SRV 10 33 0 web.svc.example.com.")},
			Extra:  []dns.RR{test.A("web.svc.example.com. 900 IN A 203.0.113.10")},
		}},
		{"the registry name of a hidden name exists: NODATA", "external", test.Case{
			Qname: "a-db.svc.example.com.", Qtype: dns.TypeA,
			Ns: []dns.RR{etcdSOA},
		}},
		{"a name that does not exist: NXDOMAIN", "external", test.Case{
			Qname: "a-nope.svc.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError,
			Ns: []dns.RR{etcdSOA},
		}},
	})
}

// TestLargeAnswers checks that truncation comes after the rewrite: an answer
// too large for the client's UDP buffer once rewritten is truncated (TC) and
// complete over TCP, and one that was too large only before the rewrite
// (many internal addresses becoming one) fits.
func TestLargeAnswers(t *testing.T) {
	t.Parallel()
	var mapped, internal, want []string
	for i := 1; i <= 100; i++ {
		mapped = append(mapped, fmt.Sprintf("10.20.0.%d", i))
		internal = append(internal, fmt.Sprintf("192.168.1.%d", i))
		want = append(want, fmt.Sprintf("198.51.100.%d", i))
	}
	c, _ := startViews(t, directives{}, a("big.example.com", mapped...), a("many.example.com", internal...))
	p := viewPolicies["external"]

	for _, bufsize := range []uint16{0, 1232} { // 0: no EDNS, 512 bytes
		t.Run(fmt.Sprintf("bufsize %d", bufsize), func(t *testing.T) {
			m := new(dns.Msg)
			m.SetQuestion("big.example.com.", dns.TypeA)
			if bufsize > 0 {
				m.SetEdns0(bufsize, false)
			}
			udp := exchange(t, "udp", c.Addr("external"), m)
			if !udp.Truncated || len(udp.Answer) >= len(want) {
				t.Errorf("UDP: TC %v with %d of %d records, want TC and fewer", udp.Truncated, len(udp.Answer), len(want))
			}
			checkLeak(t, p, "external", m.Question[0], udp)
			checkAddresses(t, udp, want)

			tcp := exchange(t, "tcp", c.Addr("external"), m)
			if tcp.Truncated || len(tcp.Answer) != len(want) {
				t.Errorf("TCP: TC %v with %d records, want all %d", tcp.Truncated, len(tcp.Answer), len(want))
			}
			checkAddresses(t, tcp, want)

			m.Question[0].Name = "many.example.com."
			if r := exchange(t, "udp", c.Addr("internal"), m); !r.Truncated {
				t.Errorf("the internal view's answer of %d addresses fits: the case proves nothing", len(internal))
			}
			checkCase(t, c.Addr("external"), test.Case{
				Qname: "many.example.com.", Qtype: dns.TypeA,
				Answer: []dns.RR{test.A("many.example.com. 900 IN A 203.0.113.10")},
			})
		})
	}
}

// checkAddresses fails t unless every A record of r holds one of want.
func checkAddresses(t *testing.T, r *dns.Msg, want []string) {
	t.Helper()
	for _, rr := range r.Answer {
		a, ok := rr.(*dns.A)
		if !ok || !strings.Contains(" "+strings.Join(want, " ")+" ", " "+a.A.String()+" ") {
			t.Errorf("unexpected record %s", rr)
		}
	}
}

// TestHostileQueries sends what an attacker on the internet might to the
// external example (corefile-examples/external.Corefile): names of other
// zones, reverse zones of the internal networks, ANY, zone transfers, CHAOS,
// EDNS0 at its limits and malformed messages. Each gets REFUSED or a reply
// that shows nothing internal, and the server keeps answering. The example
// limits response rates (rrl): each UDP query comes from a network of its own
// (127.0.N.1), so that none is limited and each reply can be judged.
func TestHostileQueries(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"), aaaa("app.example.com", "fd00::51"),
		a("x.internal.example.com", "10.0.0.9"), txt("note.example.com", "hello"))
	env := map[string]string{"DOMAIN": "example.com", "GLOBAL_ADDR": "203.0.113.10", "ETCD_ENDPOINT": etcd.Endpoint(), "NS": exampleNS}
	setEnv(t, env)
	c := startExample(t, examplePorts.Replace(readExample(t, "external.Corefile")), env)
	addr := c.Addr("dns")
	p := &viewcheck.Policy{Internal: viewcheck.DefaultInternal}

	refused := []struct {
		name  string
		qtype uint16
	}{
		{"example.org.", dns.TypeA},
		{".", dns.TypeNS},
		{"com.", dns.TypeANY},
		{"51.0.168.192.in-addr.arpa.", dns.TypePTR},
		{"168.192.in-addr.arpa.", dns.TypeAXFR},
		{"9.0.0.10.in-addr.arpa.", dns.TypePTR},
		{"1.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", dns.TypePTR},
	}
	sources := hostileSources()
	for _, q := range refused {
		for _, network := range networks {
			m := new(dns.Msg)
			m.SetQuestion(q.name, q.qtype)
			if r := exchangeFrom(t, network, sources(), addr, m); r.Rcode != dns.RcodeRefused || len(r.Answer)+len(r.Ns)+len(r.Extra) > 0 {
				t.Errorf("%s %s over %s: want REFUSED and nothing else, got\n%v", q.name, dns.TypeToString[q.qtype], network, r)
			}
		}
	}

	var hostile []*dns.Msg
	for _, name := range []string{"example.com.", "app.example.com.", "x.internal.example.com.", "internal.example.com."} {
		for _, qtype := range []uint16{dns.TypeANY, dns.TypeAXFR, dns.TypeIXFR, dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeSRV} {
			m := new(dns.Msg)
			m.SetQuestion(name, qtype)
			hostile = append(hostile, m, withEDNS(m, 65535, true), withEDNS(m, 1, false))
		}
	}
	chaos := new(dns.Msg)
	chaos.SetQuestion("version.bind.", dns.TypeTXT)
	chaos.Question[0].Qclass = dns.ClassCHAOS
	hostile = append(hostile, chaos)
	for _, m := range hostile {
		for _, network := range networks {
			r := exchangeFrom(t, network, sources(), addr, m)
			checkLeak(t, p, "external", m.Question[0], r)
			if q := m.Question[0]; (q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR) && len(r.Answer) > 1 {
				t.Errorf("%s %s over %s: a zone transfer to a client not allowed one:\n%v", q.Name, dns.TypeToString[q.Qtype], network, r)
			}
		}
	}

	ednsVersion := withEDNS(hostile[0], 4096, true)
	ednsVersion.IsEdns0().SetVersion(1)
	padding := withEDNS(hostile[0], 65535, true)
	padding.IsEdns0().Option = append(padding.IsEdns0().Option, &dns.EDNS0_PADDING{Padding: make([]byte, 8000)})
	for _, tc := range []struct {
		name  string
		m     *dns.Msg
		rcode int
	}{
		{"EDNS version 1 is BADVERS", ednsVersion, dns.RcodeBadVers},
		{"8000 bytes of EDNS0 padding", padding, dns.RcodeSuccess},
	} {
		r := exchange(t, "tcp", addr, tc.m)
		if r.Rcode != tc.rcode {
			t.Errorf("%s: rcode %s, want %s", tc.name, dns.RcodeToString[r.Rcode], dns.RcodeToString[tc.rcode])
		}
		checkLeak(t, p, "external", tc.m.Question[0], r)
	}

	sendGarbage(t, addr)
	checkCase(t, addr, test.Case{ // 303: any TTL, the example's cache lowers it
		Qname: "app.example.com.", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("app.example.com. 303 IN A 203.0.113.10")},
	})
}

// hostileSources returns a function that gives a loopback address of
// another /24 (127.0.N.1) at each call, so that response-rate limiting,
// which accounts per /24, limits none of the queries sent from them.
func hostileSources() func() netip.Addr {
	n := 0
	return func() netip.Addr {
		n++
		return netip.AddrFrom4([4]byte{127, byte(n >> 8), byte(n), 1})
	}
}

// withEDNS returns a copy of m with an OPT record of the given buffer size.
func withEDNS(m *dns.Msg, bufsize uint16, do bool) *dns.Msg {
	c := m.Copy()
	c.SetEdns0(bufsize, do)
	return c
}

// sendGarbage sends addr, over UDP and TCP, messages no server should
// answer with data: too short, a header announcing records that are not
// there, two questions, a response instead of a query. Whatever comes back
// within a short wait must not be a NOERROR reply with records.
func sendGarbage(t *testing.T, addr string) {
	t.Helper()
	two := new(dns.Msg)
	two.SetQuestion("app.example.com.", dns.TypeA)
	two.Question = append(two.Question, two.Question[0])
	twoQ, _ := two.Pack()
	resp := new(dns.Msg)
	resp.SetQuestion("app.example.com.", dns.TypeA)
	resp.Response = true
	respQ, _ := resp.Pack()
	for _, payload := range [][]byte{
		{0x12},
		{0x12, 0x34, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		append([]byte{0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0}, 0xc0, 0x0c, 0, 1, 0, 1), // a compression loop
		twoQ,
		respQ,
	} {
		for _, network := range networks {
			if r := rawExchange(t, network, addr, payload); r != nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
				t.Errorf("%x over %s: answered with records:\n%v", payload, network, r)
			}
		}
	}
}

// rawExchange sends payload to addr and returns the reply, or nil when none
// comes within half a second or it does not unpack.
func rawExchange(t *testing.T, network, addr string, payload []byte) *dns.Msg {
	t.Helper()
	conn, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dc := &dns.Conn{Conn: conn}
	conn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := dc.Write(payload); err != nil {
		return nil
	}
	buf, err := dc.ReadMsgHeader(nil)
	if err != nil {
		return nil
	}
	r := new(dns.Msg)
	if r.Unpack(buf) != nil {
		return nil
	}
	return r
}
