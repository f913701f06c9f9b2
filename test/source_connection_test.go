package test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// etcdzoneConnectionCorefile is the README's external view with its
// global address and the LAN's IPv6 prefix in etcd keys: the connection is
// etcdzone's (ETCD), the etcd plugin is left bare (its default endpoint,
// where no etcd holds the keys).
const etcdzoneConnectionCorefile = `
example.com:{port:external} {
	ready 127.0.0.1:{httpport:ready}
	globaladdr {
		from etcd /globaladdr/example.com
		map fd00:0:0:1::/64 from etcd /uplink/prefix
	}
	etcdzone {
		ns ns1.example.com ns2.example.net
		endpoint ETCD
	}
	etcd example.com
}
`

// TestSourceEtcdTakesEtcdzoneConnection starts the view before its keys
// exist: it listens at once, answers SERVFAIL and is not ready, and the log
// says which key is missing at which etcd; then the keys are written, and
// read over etcdzone's connection.
func TestSourceEtcdTakesEtcdzoneConnection(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"), aaaa("app.example.com", "fd00:0:0:1::51"))
	logs := captureLog(t)
	began := time.Now()
	c := startCoreDNS(t, strings.ReplaceAll(etcdzoneConnectionCorefile, "ETCD", etcd.Endpoint()))
	t.Logf("listening %v after the start began, without a global address", time.Since(began))
	for _, key := range []string{"/globaladdr/example.com", "/uplink/prefix"} {
		if want := "etcd " + key + " at " + etcd.Endpoint() + ": the key does not exist"; !strings.Contains(logs.String(), want) {
			t.Errorf("once listening, the log lacks %q:\n%s", want, logs)
		}
	}
	if got := answer(t, c.Addr("external"), "app.example.com"); got != "SERVFAIL" {
		t.Errorf("no global address yet: app.example.com is %q, want SERVFAIL", got)
	}
	if code := ready(t, c.Addr("ready")); code != http.StatusServiceUnavailable {
		t.Errorf("no global address yet: ready answers %d, want 503", code)
	}

	ctx := context.Background()
	if _, err := etcd.Client().Put(ctx, "/globaladdr/example.com", "203.0.113.10"); err != nil {
		t.Fatal(err)
	}
	waitServed(t, c, "NOERROR 203.0.113.10", time.Now())
	if _, err := etcd.Client().Put(ctx, "/uplink/prefix", "2001:db8:aa:1::/64"); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "map fd00:0:0:1::/64 etcd /uplink/prefix at "+etcd.Endpoint()+": translating into 2001:db8:aa:1::/64")
	checkCase(t, c.Addr("external"), test.Case{Qname: "app.example.com.", Qtype: dns.TypeAAAA,
		Answer: []dns.RR{test.AAAA("app.example.com. 303 IN AAAA 2001:db8:aa:1::51")}})
}
