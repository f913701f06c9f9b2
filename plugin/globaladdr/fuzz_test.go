package globaladdr

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/viewcheck"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/outside"

	"github.com/miekg/dns"
)

// FuzzRewrite sends an arbitrary reply from the backend (wire bytes) through
// ServeDNS with a configuration chosen by conf (see fuzzConfig), and checks
// what reaches the client: exactly one reply that packs, no internal address
// of that configuration in any record's data (A, AAAA, SVCB and HTTPS hints,
// AMTRELAY, IPSECKEY, L32, L64, APL; IPv4-mapped IPv6 included), no hidden
// name as an owner or anywhere in record data, no external-dns ownership TXT
// unless keep_registry, a reply the rewrite leaves as it is, and a backend
// reply left unmodified: viewcheck is the judge.
//
// The seed corpus is testdata/fuzz/FuzzRewrite, written from fuzzSeeds by
// TestFuzzSeedCorpus -write-corpus.
func FuzzRewrite(f *testing.F) {
	f.Fuzz(func(t *testing.T, wire []byte, conf uint64) {
		res := new(dns.Msg)
		if res.Unpack(wire) != nil {
			return
		}
		// Pack normalises what unpacking leaves loose (the OPT record's
		// extended rcode); a message that does not pack again is not a
		// reply a backend could send.
		packed, err := res.Pack()
		if err != nil {
			return
		}
		cfg, ok := fuzzConfig(conf, res)
		if !ok {
			return
		}
		g := newTestPlugin(t, cfg.corefile, fixedBackend(res, conf&confWriteBytes != 0, packed))
		req := new(dns.Msg)
		req.SetQuestion(fuzzQuestion(conf, res))
		if conf&confEDNS != 0 {
			req.SetEdns0(1232, true)
		}
		before := res.String()

		w := &packingWriter{}
		if _, err := g.ServeDNS(context.Background(), w, req); err != nil {
			t.Fatalf("ServeDNS: %v", err)
		}
		if after := res.String(); after != before {
			t.Fatalf("the backend's reply was modified:\nbefore %s\nafter  %s", before, after)
		}
		if len(w.msgs) != 1 {
			t.Fatalf("%d replies written, want 1", len(w.msgs))
		}
		out := w.msgs[0]
		if w.err != nil {
			t.Fatalf("the reply does not pack: %v\n%s", w.err, out)
		}
		if err := cfg.Check(out); err != nil {
			t.Fatalf("%v\nconfiguration:\n%s\nbackend:\n%s\nclient:\n%s", err, cfg.corefile, res, out)
		}
		if again, err := g.policy.Rewrite(out, g.addrs.Load(), &outside.Tally{}); err != nil || again != out {
			t.Fatalf("rewriting the reply again changed it (%v):\n%s\n%s", err, out, again)
		}
	})
}

// fixedBackend answers every query, the SOA sub-queries included, with res:
// as a message, or as the bytes packed when asBytes is set.
func fixedBackend(res *dns.Msg, asBytes bool, packed []byte) plugin.Handler {
	return plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, _ *dns.Msg) (int, error) {
		if asBytes {
			_, err := w.Write(packed)
			return dns.RcodeSuccess, err
		}
		return dns.RcodeSuccess, w.WriteMsg(res)
	})
}

// packingWriter packs every reply written to it, as a server does on its
// way to the client, and keeps them.
type packingWriter struct {
	test.ResponseWriter
	msgs []*dns.Msg
	err  error
}

func (w *packingWriter) WriteMsg(m *dns.Msg) error {
	w.msgs = append(w.msgs, m)
	_, w.err = m.Pack()
	return w.err
}

func (w *packingWriter) Write(buf []byte) (int, error) {
	m := new(dns.Msg)
	w.err = m.Unpack(buf)
	w.msgs = append(w.msgs, m)
	return len(buf), w.err
}

// The bits of conf, the fuzzer's configuration word.
const (
	confAddrs      = 0       // 2 bits: which global addresses
	confTTL        = 2       // 2 bits: ttl property
	confInternal   = 4       // 2 bits: internal property
	confMaps       = 6       // 3 bits: a subset of fuzzMaps
	confHide       = 9       // 3 bits: a subset of fuzzHide
	confHideMsg    = 12      // 1 bit: also hide a name taken from the reply
	confHideRecord = 13      // 5 bits: the record that name is taken from
	confHideWhich  = 18      // 2 bits: its owner, target, or their parents
	confQname      = 20      // 3 bits: the query's name, see fuzzQuestion
	confQtype      = 23      // 4 bits: the query's type, see fuzzQuestion
	confKeep       = 1 << 27 // keep_registry
	confWriteBytes = 1 << 28 // the backend writes bytes, not a message
	confEDNS       = 1 << 29 // the query has an OPT record
	confMapsOnly   = 1 << 30 // no ADDRESS: the maps alone (the first when none is chosen)
)

func bits(conf uint64, at, n uint) int { return int(conf >> at & (1<<n - 1)) }

var (
	fuzzAddrs = []string{"203.0.113.10", "2001:db8::10", "203.0.113.10 2001:db8::10", "203.0.113.10 203.0.113.11 2001:db8::10 2001:db8::11"}
	fuzzTTL   = []string{"", "ttl 0", "ttl 900", "ttl 2147483647"}
	// fuzzInternal: the default, narrower ranges, ranges of public
	// addresses, and half of each address space.
	fuzzInternal = []string{"", "internal 10.0.0.0/8 fd00::/8", "internal 198.51.100.0/24 2001:db8:dead::/48", "internal 0.0.0.0/1 8000::/1"}
	fuzzMaps     = []string{"map 192.168.7.0/24 192.0.2.0/24", "map fd00:1::/48 2001:db8:1::/48", "map 10.1.2.3 192.0.2.77"}
	fuzzHide     = []string{"secret.example.com", "internal.example.com", "example.net"}
	fuzzQtypes   = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeANY, dns.TypeTXT, dns.TypeSRV, dns.TypeCNAME, dns.TypeMX, dns.TypeNS, dns.TypeSOA, dns.TypePTR, dns.TypeAXFR, dns.TypeIXFR, dns.TypeHTTPS, dns.TypeSVCB}
	// safeName is what fuzzConfig puts into a Corefile unquoted.
	safeName = regexp.MustCompile(`^[a-zA-Z0-9_-][a-zA-Z0-9._-]*$`)
)

// fuzzCase is one configuration of the fuzzer and what it must never let
// through.
type fuzzCase struct {
	corefile string
	viewcheck.Policy
}

// fuzzConfig derives a configuration from conf, and from the names in res
// so that hide can hit what the reply holds. ok is false when the name
// taken from res can't be written in a Corefile.
func fuzzConfig(conf uint64, res *dns.Msg) (c fuzzCase, ok bool) {
	var b strings.Builder
	if conf&confMapsOnly != 0 {
		b.WriteString("globaladdr {\n")
		if bits(conf, confMaps, 3) == 0 {
			conf |= 1 << confMaps
		}
	} else {
		fmt.Fprintf(&b, "globaladdr %s {\n", fuzzAddrs[bits(conf, confAddrs, 2)])
	}
	props := []string{fuzzTTL[bits(conf, confTTL, 2)], fuzzInternal[bits(conf, confInternal, 2)]}
	c.Internal = viewcheck.DefaultInternal
	if in := props[1]; in != "" {
		c.Internal = viewcheck.MustPrefixes(strings.Fields(in)[1:]...)
	}
	for i, m := range fuzzMaps {
		if bits(conf, confMaps+uint(i), 1) == 1 {
			props = append(props, m)
			c.Internal = append(c.Internal, viewcheck.MustPrefixes(strings.Fields(m)[1])...)
		}
	}
	for i, h := range fuzzHide {
		if bits(conf, confHide+uint(i), 1) == 1 {
			c.Hide = append(c.Hide, h)
		}
	}
	if bits(conf, confHideMsg, 1) == 1 {
		name := nameIn(res, bits(conf, confHideRecord, 5), bits(conf, confHideWhich, 2))
		if name == "" || name == "." || !safeName.MatchString(name) {
			return c, false
		}
		c.Hide = append(c.Hide, name)
	}
	if len(c.Hide) > 0 {
		props = append(props, "hide "+strings.Join(c.Hide, " "))
	}
	if c.KeepRegistry = conf&confKeep != 0; c.KeepRegistry {
		props = append(props, "keep_registry")
	}
	for _, p := range props {
		if p != "" {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	b.WriteString("}")
	c.corefile = b.String()
	return c, true
}

// nameIn returns the owner (which 0), target (1) or the parent of either
// (2, 3) of the i-th record of res, or "" when there is none.
func nameIn(res *dns.Msg, i, which int) string {
	rrs := append(append(append([]dns.RR(nil), res.Answer...), res.Ns...), res.Extra...)
	if len(rrs) == 0 {
		return ""
	}
	rr := rrs[i%len(rrs)]
	name := rr.Header().Name
	if which%2 == 1 {
		name = ""
		if names := viewcheck.Names(rr); len(names) > 0 {
			name = names[0]
		}
	}
	if which >= 2 && name != "" {
		if off, end := dns.NextLabel(name, 0); !end {
			name = name[off:]
		}
	}
	return strings.TrimSuffix(name, ".")
}

// fuzzQuestion returns the query's name and type: the reply's question, the
// zone's apex, a name of the reply, a hidden name or one below it; the
// reply's question type or one of fuzzQtypes.
func fuzzQuestion(conf uint64, res *dns.Msg) (string, uint16) {
	qtype := dns.TypeA
	if t := bits(conf, confQtype, 4); t > 0 && t <= len(fuzzQtypes) {
		qtype = fuzzQtypes[t-1]
	} else if len(res.Question) > 0 {
		qtype = res.Question[0].Qtype
	}
	var name string
	switch bits(conf, confQname, 3) {
	case 0:
		if len(res.Question) > 0 {
			name = res.Question[0].Name
		}
	case 1:
		name = "example.com."
	case 2, 3:
		name = dns.Fqdn(nameIn(res, bits(conf, confHideRecord, 5), 0))
	case 4:
		name = "secret.example.com."
	case 5:
		name = "x.secret.example.com."
	case 6:
		name = "a.internal.example.com."
	}
	if _, ok := dns.IsDomainName(name); !ok || name == "" {
		name = "app.example.com."
	}
	return name, qtype
}

// fuzzSeed is one entry of the committed seed corpus.
type fuzzSeed struct {
	name    string
	conf    uint64
	qname   string
	qtype   uint16
	answer  []string
	ns      []string
	extra   []string
	rcode   int
	withOPT bool
}

const (
	hideSecret = 1 << confHide
	hideAll    = 7 << confHide
)

// fuzzSeeds are replies an etcd-backed zone gives, ancestors' merged
// subtrees included, and a few that no backend should give.
var fuzzSeeds = []fuzzSeed{
	{name: "internal-a", qname: "app.example.com.", qtype: dns.TypeA, answer: []string{"app.example.com. 30 IN A 192.168.0.51", "app.example.com. 30 IN A 192.168.0.52"}},
	{name: "mixed-aaaa", conf: 2 | 2<<confTTL, qname: "app.example.com.", qtype: dns.TypeAAAA, answer: []string{"app.example.com. 30 IN AAAA fd00::51", "app.example.com. 30 IN AAAA ::ffff:10.0.0.1", "app.example.com. 30 IN AAAA 2001:db8:5::1"}},
	{name: "v4-only-aaaa-dropped", qname: "app.example.com.", qtype: dns.TypeAAAA, answer: []string{"app.example.com. 30 IN AAAA fd00::51"}, withOPT: true},
	{name: "maps", conf: 2 | 7<<confMaps, qname: "app.example.com.", qtype: dns.TypeANY, answer: []string{"app.example.com. 30 IN A 192.168.7.9", "app.example.com. 30 IN A 10.1.2.3", "app.example.com. 30 IN AAAA fd00:1::7"}},
	{name: "apex-a-subtree", conf: hideSecret, qname: "example.com.", qtype: dns.TypeA, answer: []string{"example.com. 30 IN A 192.168.0.51", "example.com. 30 IN A 198.51.100.9", "example.com. 30 IN A 10.9.9.9"}},
	{name: "apex-srv-subtree", conf: hideSecret | 3, qname: "example.com.", qtype: dns.TypeSRV,
		answer: []string{"example.com. 30 IN SRV 10 33 0 app.example.com.", "example.com. 30 IN SRV 10 33 0 db.secret.example.com.", "example.com. 30 IN SRV 10 33 0 x.internal.example.com."},
		extra:  []string{"app.example.com. 30 IN A 192.168.0.51", "db.secret.example.com. 30 IN A 192.168.0.60", "x.internal.example.com. 30 IN AAAA fd00::60"}},
	{name: "apex-txt-subtree", conf: hideSecret, qname: "example.com.", qtype: dns.TypeTXT, answer: []string{
		`example.com. 30 IN TXT "\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/web/app\""`,
		`example.com. 30 IN TXT "v=spf1 -all"`,
		`example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/secret/db"`}},
	{name: "registry-only-nxdomain", qname: "a-app.example.com.", qtype: dns.TypeTXT, answer: []string{`a-app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`}},
	{name: "registry-kept", conf: confKeep, qname: "a-app.example.com.", qtype: dns.TypeTXT, answer: []string{`a-app.example.com. 30 IN TXT "heritage=external-dns,external-dns/owner=default"`}},
	{name: "cname-to-hidden", conf: hideAll, qname: "www.example.com.", qtype: dns.TypeA, answer: []string{"www.example.com. 30 IN CNAME db.secret.example.com.", "db.secret.example.com. 30 IN A 192.168.0.60"}},
	{name: "cname-chain", qname: "www.example.com.", qtype: dns.TypeA, answer: []string{"www.example.com. 30 IN CNAME app.example.com.", "app.example.com. 30 IN A 192.168.0.51"}},
	{name: "hidden-query", conf: hideSecret | 5<<confQname, qname: "x.secret.example.com.", qtype: dns.TypeA, answer: []string{"x.secret.example.com. 30 IN A 192.168.0.61"}},
	{name: "targets", conf: hideAll, qname: "example.com.", qtype: dns.TypeANY, answer: []string{
		"example.com. 30 IN MX 10 mail.secret.example.com.", "example.com. 30 IN NS ns.internal.example.com.",
		"example.com. 30 IN DNAME secret.example.com.", "example.com. 30 IN NSEC db.secret.example.com. A RRSIG NSEC",
		"51.0.168.192.in-addr.arpa. 30 IN PTR db.secret.example.com."}},
	{name: "signed", qname: "example.com.", qtype: dns.TypeA, answer: []string{"example.com. 30 IN A 192.168.0.51",
		"example.com. 30 IN RRSIG A 13 2 30 20300101000000 20200101000000 1234 example.com. c2lnbmF0dXJl"}},
	{name: "nxdomain", qname: "nope.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, ns: []string{zoneSOA}},
	{name: "servfail-with-data", qname: "app.example.com.", qtype: dns.TypeA, rcode: dns.RcodeServerFailure, extra: []string{"app.example.com. 30 IN A 10.1.1.1"}},
	{name: "soa-in-authority", qname: "app.example.com.", qtype: dns.TypeAAAA, answer: []string{"app.example.com. 30 IN AAAA fd00::1"}, ns: []string{"secret.example.com. 30 IN SOA ns.example.com. h.example.com. 1 2 3 4 5", zoneSOA}},
	{name: "transfer", qname: "example.com.", qtype: dns.TypeAXFR, answer: []string{zoneSOA, "app.example.com. 30 IN A 192.168.0.51", `a-app.example.com. 30 IN TXT "heritage=external-dns"`, zoneSOA}},
	{name: "bytes", conf: confWriteBytes | hideSecret, qname: "example.com.", qtype: dns.TypeSRV,
		answer: []string{"example.com. 30 IN SRV 10 50 0 db.secret.example.com."}, extra: []string{"db.secret.example.com. 30 IN A 192.168.0.60"}},
	{name: "hide-from-reply", conf: 1<<confHideMsg | 2<<confHideWhich | 1<<confHideRecord, qname: "example.com.", qtype: dns.TypeSRV,
		answer: []string{"example.com. 30 IN SRV 10 50 0 a.b.example.com.", "example.com. 30 IN SRV 10 50 0 c.d.example.com."}, extra: []string{"a.b.example.com. 30 IN A 198.51.100.1", "c.d.example.com. 30 IN A 198.51.100.2"}},
	{name: "svcb-hints", conf: 2 | 1<<confMaps | hideSecret, qname: "app.example.com.", qtype: dns.TypeHTTPS, answer: []string{
		`app.example.com. 30 IN HTTPS 1 . alpn="h2" ipv4hint=192.168.0.51,203.0.113.5,192.168.0.52 ipv6hint=fd00::51`,
		`app.example.com. 30 IN HTTPS 2 . mandatory=ipv6hint alpn="h3" ipv6hint=fd00::52`,
		`svc.example.com. 30 IN SVCB 1 app.example.com. ipv4hint=10.0.0.9`,
		`hid.example.com. 30 IN HTTPS 1 db.secret.example.com. ipv4hint=203.0.113.5`}},
	{name: "address-data", qname: "example.com.", qtype: dns.TypeANY, answer: []string{
		"relay.example.com. 30 IN AMTRELAY 10 0 1 192.168.0.61", "relay.example.com. 30 IN AMTRELAY 10 0 2 2001:db8::61",
		"loc.example.com. 30 IN L32 10 192.168.0.62", "loc.example.com. 30 IN L64 10 fd00:0000:0000:0001",
		"apl.example.com. 30 IN APL 1:192.168.0.0/24 1:203.0.113.0/24",
		"gw.example.com. 30 IN IPSECKEY 10 1 2 192.168.0.1 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ=="}},
	{name: "names-in-data", conf: hideAll, qname: "example.com.", qtype: dns.TypeANY, answer: []string{
		`example.com. 30 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.secret.example.com.`,
		"example.com. 30 IN KX 10 kx.secret.example.com.", "example.com. 30 IN AFSDB 1 afs.internal.example.com.",
		"example.com. 30 IN RT 10 rt.secret.example.com.", "example.com. 30 IN LP 10 l.secret.example.com.",
		"example.com. 30 IN RP mbox.secret.example.com. txt.example.com."}},
	{name: "reverse-names", qname: "51.0.168.192.in-addr.arpa.", qtype: dns.TypePTR, answer: []string{
		"51.0.168.192.in-addr.arpa. 30 IN PTR app.example.com.", "www.example.com. 30 IN CNAME 51.0/25.0.168.192.in-addr.arpa.",
		"20.100.51.198.in-addr.arpa. 30 IN PTR shop.example.com.", "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 30 IN PTR app.example.com."}},
	{name: "maps-only", conf: confMapsOnly | 5<<confMaps, qname: "app.example.com.", qtype: dns.TypeANY, answer: []string{
		"app.example.com. 30 IN A 192.168.7.9", "app.example.com. 30 IN A 192.168.0.51", "app.example.com. 30 IN AAAA fd00::51", "app.example.com. 30 IN A 10.1.2.3"}},
	{name: "broad-internal", conf: 3<<confInternal | 3, qname: "example.com.", qtype: dns.TypeANY, answer: []string{"example.com. 30 IN A 1.2.3.4", "example.com. 30 IN AAAA ::1:2", "example.com. 30 IN A 200.1.1.1"}},
}

// wire packs the seed's reply.
func (s fuzzSeed) wire() ([]byte, error) {
	m := new(dns.Msg)
	m.SetQuestion(s.qname, s.qtype)
	m.Id = 1 // SetQuestion's is random: the corpus must not change
	m.Response, m.Authoritative, m.Rcode = true, true, s.rcode
	for _, sec := range []struct {
		rrs []string
		to  *[]dns.RR
	}{{s.answer, &m.Answer}, {s.ns, &m.Ns}, {s.extra, &m.Extra}} {
		for _, z := range sec.rrs {
			rr, err := dns.NewRR(z)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", z, err)
			}
			*sec.to = append(*sec.to, rr)
		}
	}
	if s.withOPT {
		m.SetEdns0(1232, true)
	}
	return m.Pack()
}

var writeCorpus = flag.Bool("write-corpus", false, "write FuzzRewrite's seed corpus into testdata/fuzz")

// TestFuzzSeedCorpus checks that testdata/fuzz/FuzzRewrite holds every seed
// of fuzzSeeds as it is now; with -write-corpus it writes them.
func TestFuzzSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRewrite")
	for _, s := range fuzzSeeds {
		wire, err := s.wire()
		if err != nil {
			t.Fatalf("seed %s: %v", s.name, err)
		}
		want := fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\nuint64(%d)\n", wire, s.conf)
		path := filepath.Join(dir, s.name)
		if *writeCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("seed %s is missing or stale in %s (%v): run go test -run TestFuzzSeedCorpus -write-corpus", s.name, dir, err)
		}
	}
}
