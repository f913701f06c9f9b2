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
// into the delegated subdomain and into the hidden one, and in loops (one
// through a wildcard); a wildcard; deep names under empty non-terminals; the
// apex's own address; an address the map translates; a public address;
// ownership records; a hidden subtree, and a hidden name whose parent holds
// nothing else: what CheckView's Corefile is made for.
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
	{Name: "*.loop.example.com", Type: "CNAME", Targets: []string{"x.loop.example.com"}},
	{Name: "ping.example.com", Type: "CNAME", Targets: []string{"pong.example.com"}},
	{Name: "pong.example.com", Type: "CNAME", Targets: []string{"ping.example.com"}},
	{Name: "mail.example.com", Type: "A", Targets: []string{"192.168.0.25"}},
}

// Keys are SkyDNS values of Zone's domain that external-dns does not write,
// by their etcd keys, as users write them by hand: SRV records (of an
// internal address, which is their target's, of names in the zone, out of
// it and in the hidden subtree, with priorities and weights) and MX records
// (at the apex, of an address and of a name out of the zone).
var Keys = map[string]string{
	"/skydns/com/example/_tcp/_minecraft/x1": `{"host":"192.168.0.60","port":25565,"weight":3,"targetstrip":1}`,
	"/skydns/com/example/_tcp/_minecraft/x2": `{"host":"192.168.0.61","port":25566,"weight":1,"targetstrip":1}`,
	"/skydns/com/example/_tcp/_http":         `{"host":"app.example.com","port":80,"priority":20}`,
	"/skydns/com/example/_tcp/_xmpp-server":  `{"host":"xmpp.example.net","port":5269,"priority":5,"weight":10}`,
	"/skydns/com/example/_tcp/_lan":          `{"host":"app.lan.example.com","port":443}`,
	"/skydns/com/example":                    `{"host":"mail.example.com","mail":true}`,
	"/skydns/com/example/corp/mx1":           `{"host":"192.168.0.26","priority":5,"mail":true,"targetstrip":1}`,
	"/skydns/com/example/corp/mx2":           `{"host":"relay.example.net","priority":20,"mail":true}`,
}

// viewCorefile is the external view the differential tests hold against
// BIND: globaladdr with a hidden subtree and a map, above etcdzone with a
// delegation whose glue is an internal address and one whose name server
// lies in the first (sibling glue), transferable with TSIG to BIND. ETCD
// stands for etcd's endpoint, BIND for BIND's address, KEY and SECRET for
// the TSIG key, GLOBALS for the global addresses.
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
		delegate dev.example.com ns1.lab.example.com pub.example.com
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
// (192.168.1.0/24 to 198.51.100.0/24) and two delegations (lab.example.com,
// to ns1.lab.example.com with glue 192.168.0.53, and ns2.example.net;
// dev.example.com, to ns1.lab.example.com and pub.example.com, a name of
// the zone), and holds its answers against BIND's, as Check does, also about
// every name etcd holds. Its global addresses are globals, by default
// 203.0.113.10 and 2001:db8::10.
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
