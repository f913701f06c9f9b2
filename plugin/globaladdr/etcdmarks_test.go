package globaladdr

import (
	"context"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/marks"

	"github.com/miekg/dns"
)

// TestEtcdMarksFilter holds the view behind the etcd plugin to its tree's
// marks: before they are read, a reply with records to judge is SERVFAIL;
// then a withheld name is NXDOMAIN, whatever the case of the question, a
// withheld record leaves a reply the view otherwise shows, and the apex's
// SOA passes.
func TestEtcdMarksFilter(t *testing.T) {
	reply := func(rrs ...dns.RR) plugin.Handler {
		return plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Authoritative, m.Answer = true, rrs
			w.WriteMsg(m)
			return dns.RcodeSuccess, nil
		})
	}
	serve := func(backend plugin.Handler, m *marks.Marks, name string, qtype uint16) *dns.Msg {
		t.Helper()
		g, err := parse(caddy.NewTestController("dns", "globaladdr 203.0.113.10"))
		if err != nil {
			t.Fatal(err)
		}
		g.Next = backend
		g.etcdMarks.Store(&etcdMarks{marks: m, etcd: &etcd.Etcd{Zones: []string{"example.com."}}})
		req := new(dns.Msg)
		req.SetQuestion(name, qtype)
		rec := dnstest.NewRecorder(&test.ResponseWriter{})
		if _, err := g.ServeDNS(context.Background(), rec, req); err != nil {
			t.Fatal(err)
		}
		return rec.Msg
	}
	app := test.A("app.example.com. 30 IN A 192.168.0.51")
	secret := test.A("secret.example.com. 30 IN A 203.0.113.77")
	soa := test.SOA("example.com. 30 IN SOA ns.dns.example.com. hostmaster.example.com. 1 7200 1800 86400 30")

	m := marks.New("/skydns", []string{"example.com."})
	if r := serve(reply(app), m, "app.example.com.", dns.TypeA); r.Rcode != dns.RcodeServerFailure {
		t.Errorf("before the marks are read: %s, want SERVFAIL", dns.RcodeToString[r.Rcode])
	}
	m.Set(map[string][]byte{
		"/skydns/com/example/app/x1":    []byte(`{"host":"192.168.0.51"}`),
		"/skydns/com/example/secret/x1": []byte(`{"host":"203.0.113.77","globaladdr-external":"false"}`),
	})
	if r := serve(reply(app), m, "app.example.com.", dns.TypeA); len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "203.0.113.10" {
		t.Errorf("app: %v, want its global address", r.Answer)
	}
	for _, name := range []string{"secret.example.com.", "SeCrEt.Example.COM."} {
		if r := serve(reply(secret), m, name, dns.TypeA); r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
			t.Errorf("%s: %s %v, want NXDOMAIN", name, dns.RcodeToString[r.Rcode], r.Answer)
		}
	}
	// A CNAME chain the etcd plugin followed: the withheld target's
	// records go, the CNAME stays.
	alias := test.CNAME("alias.example.com. 30 IN CNAME secret.example.com.")
	m.Set(map[string][]byte{
		"/skydns/com/example/alias":     []byte(`{"host":"secret.example.com"}`),
		"/skydns/com/example/secret/x1": []byte(`{"host":"203.0.113.77","globaladdr-external":"false"}`),
	})
	if r := serve(reply(alias, secret), m, "alias.example.com.", dns.TypeA); len(r.Answer) != 1 || r.Answer[0].Header().Rrtype != dns.TypeCNAME {
		t.Errorf("alias: %v, want the CNAME alone", r.Answer)
	}
	// The apex: its subtree holds a withheld key, its SOA passes.
	if r := serve(reply(soa), m, "example.com.", dns.TypeSOA); len(r.Answer) != 1 {
		t.Errorf("the apex's SOA: %v, want it", r.Answer)
	}
	if r := serve(reply(secret), m, "example.com.", dns.TypeA); len(r.Answer) != 0 {
		t.Errorf("the apex's subtree answer: %v, want none", r.Answer)
	}

	// A new host the etcd plugin answers before the marks' watch brings
	// its key: the reply waits for its mark, and shows it then; one that
	// never comes is withheld after lag.
	fresh := test.A("fresh.example.com. 30 IN A 192.168.0.60")
	watched := map[string][]byte{
		"/skydns/com/example/app/x1":   []byte(`{"host":"192.168.0.51"}`),
		"/skydns/com/example/fresh/x1": []byte(`{"host":"192.168.0.60"}`),
	}
	time.AfterFunc(50*time.Millisecond, func() { m.Set(watched) })
	if r := serve(reply(fresh), m, "fresh.example.com.", dns.TypeA); len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "203.0.113.10" {
		t.Errorf("fresh, its key brought after the answer: %v, want its global address", r.Answer)
	}
	// One written withheld is NXDOMAIN, whether its mark came before the
	// question or while the reply waited for it.
	shut := test.A("shut.example.com. 30 IN A 192.168.0.62")
	withheldNew := map[string][]byte{"/skydns/com/example/shut/x1": []byte(`{"host":"192.168.0.62","globaladdr-external":"false"}`)}
	for k, v := range watched {
		withheldNew[k] = v
	}
	time.AfterFunc(50*time.Millisecond, func() { m.Set(withheldNew) })
	if r := serve(reply(shut), m, "shut.example.com.", dns.TypeA); r.Rcode != dns.RcodeNameError || len(r.Answer) != 0 {
		t.Errorf("shut, written withheld, its key brought after the answer: %s %v, want NXDOMAIN", dns.RcodeToString[r.Rcode], r.Answer)
	}
	never := test.A("never.example.com. 30 IN A 192.168.0.61")
	if r := serve(reply(never), m, "never.example.com.", dns.TypeA); len(r.Answer) != 0 {
		t.Errorf("never, whose key never comes: %v, want none", r.Answer)
	}
}
