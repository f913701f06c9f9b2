package oracle

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"
)

// Zone is a zone as external-dns writes it, with what makes an
// authoritative server's answers differ from a SkyDNS lookup: CNAMEs in a
// chain, into the zone, out of it, to a missing name, to a wildcard's name,
// into the delegated subdomain and into the hidden one; a wildcard; deep
// names under empty non-terminals; the apex's own address; an address the
// map translates; a public address; ownership records; a hidden subtree,
// and a hidden name whose parent holds nothing else: what CheckView's
// Corefile is made for.
var Zone = []externaldns.Record{
	{Name: "example.com", Type: "A", Targets: []string{"192.168.0.50"}, Resource: "ingress/default/apex"},
	{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51", "192.168.0.52"}, Resource: "ingress/default/app"},
	{Name: "app.example.com", Type: "AAAA", Targets: []string{"fd00::51"}, Resource: "ingress/default/app"},
	{Name: "www.example.com", Type: "CNAME", Targets: []string{"app.example.com"}, Resource: "ingress/default/www"},
	{Name: "w2.example.com", Type: "CNAME", Targets: []string{"www.example.com"}},
	{Name: "out.example.com", Type: "CNAME", Targets: []string{"shop.example.net"}},
	{Name: "dangling.example.com", Type: "CNAME", Targets: []string{"missing.example.com"}},
	{Name: "wc.example.com", Type: "CNAME", Targets: []string{"x.apps.example.com"}},
	{Name: "dl.example.com", Type: "CNAME", Targets: []string{"host.lab.example.com"}},
	{Name: "tohidden.example.com", Type: "CNAME", Targets: []string{"app.lan.example.com"}},
	{Name: "*.apps.example.com", Type: "A", Targets: []string{"192.168.0.80"}, Resource: "ingress/default/apps"},
	{Name: "a.b.deep.example.com", Type: "A", Targets: []string{"192.168.0.90"}},
	{Name: "mapped.example.com", Type: "A", Targets: []string{"192.168.1.7"}},
	{Name: "pub.example.com", Type: "A", Targets: []string{"198.51.100.80"}},
	{Name: "info.example.com", Type: "TXT", Targets: []string{"hello", "world"}},
	{Name: "app.lan.example.com", Type: "A", Targets: []string{"192.168.0.70"}},
	{Name: "lan.example.com", Type: "TXT", Targets: []string{"secret"}},
	{Name: "db.internal.example.com", Type: "A", Targets: []string{"10.0.0.5"}},
}

// viewCorefile is the external view the differential tests hold against
// BIND: globaladdr with a hidden subtree and a map, above etcdzone with a
// delegation whose glue is an internal address, transferable with TSIG to
// BIND. ETCD stands for etcd's endpoint, BIND for BIND's address, KEY and
// SECRET for the TSIG key, GLOBALS for the global addresses.
const viewCorefile = `example.com:{port:view} {
	tsig {
		secret KEY SECRET
		require AXFR IXFR
	}
	globaladdr GLOBALS {
		ttl 900
		hide lan.example.com db.internal.example.com
		map 192.168.1.0/24 198.51.100.0/24
	}
	etcdzone {
		ns ns1.example.net ns2.example.net
		delegate lab.example.com ns1.lab.example.com ns2.example.net
		glue ns1.lab.example.com 192.168.0.53
	}
	transfer {
		to BIND
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// CheckView starts the external view of example.com from the etcd at
// endpoint, with a hidden subtree (lan.example.com, and
// db.internal.example.com below a name that holds nothing else), a map
// (192.168.1.0/24 to 198.51.100.0/24) and a delegation (lab.example.com, to
// ns1.lab.example.com with glue 192.168.0.53, and ns2.example.net), and
// holds its answers against BIND's, as Check does, also about every name
// etcd holds. Its global addresses are globals, by default 203.0.113.10 and
// 2001:db8::10.
func CheckView(t testing.TB, endpoint string, globals ...string) {
	t.Helper()
	if len(globals) == 0 {
		globals = []string{"203.0.113.10", "2001:db8::10"}
	}
	bind := nameserver.FreeLoopbackAddr(t)
	view := corednstest.Start(t, strings.NewReplacer(
		"GLOBALS", strings.Join(globals, " "),
		"ETCD", endpoint,
		"BIND", bind,
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
	).Replace(viewCorefile))
	Check(t, bind, nameserver.Primary{Zone: "example.com.", Addr: view.Addr("view"), Key: nameserver.TestKey}, etcdNames(t, endpoint))
}

// etcdNames returns the owner names of the records under /skydns in the etcd
// at endpoint, as the etcd plugin reads them.
func etcdNames(t testing.TB, endpoint string) []string {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/skydns/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kv := range resp.Kvs {
		var s msg.Service
		if json.Unmarshal(kv.Value, &s) != nil {
			continue
		}
		labels := dns.SplitDomainName(msg.Domain(string(kv.Key)))
		if s.TargetStrip >= 0 && s.TargetStrip < len(labels) {
			names = append(names, dns.Fqdn(strings.Join(labels[s.TargetStrip:], ".")))
		}
	}
	return names
}
