package etcdxfr

import (
	"context"
	"fmt"
	"testing"

	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/pkg/upstream"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"

	"github.com/miekg/dns"
)

// newTestXfr returns an etcdxfr for example.com above a real etcd plugin
// reading an embedded etcd, as start would set it up, with serial 7.
func newTestXfr(t testing.TB) (*EtcdXfr, *etcdtest.Server) {
	t.Helper()
	s, err := etcdtest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	e := &etcd.Etcd{Zones: []string{"example.com."}, PathPrefix: "skydns", Client: s.Client(), Upstream: upstream.New()}
	x := &EtcdXfr{Next: e, Zones: []string{"example.com."}, etcd: e}
	x.apex = apex{ns: []string{"ns1.example.net."}, ttl: 3600, refresh: 3600, retry: 600, expire: 1209600, minimum: 300}
	x.zones = map[string]*zone{"example.com.": {name: "example.com.", path: "/skydns/com/example/", serial: &serial{value: 7}}}
	return x, s
}

func put(t testing.TB, s *etcdtest.Server, records ...externaldns.Record) {
	t.Helper()
	for _, r := range records {
		if err := externaldns.Put(context.Background(), s.Client(), "/skydns", r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServeDNS(t *testing.T) {
	x, s := newTestXfr(t)
	put(t, s, externaldns.Record{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}})
	soa := "example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 7 3600 600 1209600 300"
	cases := []test.Case{
		{Qname: "example.com.", Qtype: dns.TypeSOA, Answer: []dns.RR{test.SOA(soa)}},
		{Qname: "example.com.", Qtype: dns.TypeNS, Answer: []dns.RR{test.NS("example.com. 3600 IN NS ns1.example.net.")}},
		{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("app.example.com. 300 IN A 192.168.0.51")}},
		{Qname: "app.example.com.", Qtype: dns.TypeMX, Ns: []dns.RR{test.SOA(soa)}},
		{Qname: "nothing.example.com.", Qtype: dns.TypeA, Rcode: dns.RcodeNameError, Ns: []dns.RR{test.SOA(soa)}},
		{Qname: "app.example.com.", Qtype: dns.TypeSOA, Answer: []dns.RR{test.SOA(soa)}},
	}
	for _, tc := range cases {
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := x.ServeDNS(context.Background(), rec, tc.Msg()); err != nil {
			t.Fatalf("%s %s: %v", tc.Qname, dns.TypeToString[tc.Qtype], err)
		}
		if err := test.SortAndCheck(rec.Msg, tc); err != nil {
			t.Errorf("%s %s: %v\n%v", tc.Qname, dns.TypeToString[tc.Qtype], err, rec.Msg)
		}
	}
}

// TestTransferPages transfers a zone of more keys than a page holds: every
// record comes, once, at its own name, between the SOA records.
func TestTransferPages(t *testing.T) {
	x, s := newTestXfr(t)
	const hosts = 2*pageSize + 10
	for i := range hosts {
		put(t, s, externaldns.Record{Name: fmt.Sprintf("h%d.example.com", i), Type: "A", Targets: []string{"192.168.0.51"}})
	}
	put(t, s, externaldns.Record{Name: "info.example.com", Type: "TXT", Targets: []string{"hello"}},
		externaldns.Record{Name: "alias.example.com", Type: "CNAME", Targets: []string{"h1.example.com"}})

	ch, err := x.Transfer("example.com.", 0)
	if err != nil {
		t.Fatal(err)
	}
	var rrs []dns.RR
	for batch := range ch {
		rrs = append(rrs, batch...)
	}
	if n := len(rrs); n != hosts+5 {
		t.Fatalf("%d records, want %d hosts, a TXT, a CNAME, the NS and the SOA twice", n, hosts)
	}
	if rrs[0].Header().Rrtype != dns.TypeSOA || rrs[len(rrs)-1].Header().Rrtype != dns.TypeSOA {
		t.Errorf("the transfer must begin and end with the SOA")
	}
	seen := map[string]bool{}
	for _, rr := range rrs[1 : len(rrs)-1] {
		key := rr.Header().Name + dns.TypeToString[rr.Header().Rrtype]
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
	}
	for _, want := range []string{"h0.example.com.A", fmt.Sprintf("h%d.example.com.A", hosts-1), "info.example.com.TXT", "alias.example.com.CNAME", "example.com.NS"} {
		if !seen[want] {
			t.Errorf("no %s", want)
		}
	}
}

func TestTransferIXFR(t *testing.T) {
	x, _ := newTestXfr(t)
	for _, tc := range []struct {
		serial uint32
		whole  bool
	}{{7, false}, {8, false}, {6, true}, {7 + 1<<31 + 1, true}} {
		ch, err := x.Transfer("example.com.", tc.serial)
		if err != nil {
			t.Fatal(err)
		}
		var rrs []dns.RR
		for batch := range ch {
			rrs = append(rrs, batch...)
		}
		if whole := len(rrs) > 1; whole != tc.whole {
			t.Errorf("IXFR from %d: %d records", tc.serial, len(rrs))
		}
	}
	if _, err := x.Transfer("example.org.", 0); err == nil {
		t.Error("a transfer of another zone must fail")
	}
}

func TestOwnerName(t *testing.T) {
	for _, tc := range []struct {
		key   string
		strip int
		want  string
		ok    bool
	}{
		{"/skydns/com/example/app/1a2b3c4d", 1, "app.example.com.", true},
		{"/skydns/com/example/App/x1", 0, "x1.app.example.com.", true},
		{"/skydns/com/example/1a2b3c4d", 1, "example.com.", true},
		{"/skydns/com/example/a", 4, "", false},
	} {
		got, ok := ownerName(tc.key, tc.strip)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ownerName(%q, %d) = %q, %v; want %q, %v", tc.key, tc.strip, got, ok, tc.want, tc.ok)
		}
	}
}

func TestInZone(t *testing.T) {
	for _, tc := range []struct {
		name, zone string
		want       bool
	}{
		{"example.com.", "example.com.", true},
		{"App.Example.COM.", "example.com.", true},
		{"notexample.com.", "example.com.", false},
		{"com.", "example.com.", false},
		{"anything.", ".", true},
	} {
		if got := inZone(tc.name, tc.zone); got != tc.want {
			t.Errorf("inZone(%q, %q) = %v", tc.name, tc.zone, got)
		}
	}
}
