package test

import (
	"context"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestKubernetesPipelinePTR runs the real external-dns (make
// externaldns-bin) with --create-ptr on two Ingresses, one at an internal
// address (192.168.0.51) and one at a public one (198.51.100.20), and
// checks the PTR records its coredns provider writes: each at the exact key
// of its reverse name, as CoreDNS's etcd plugin reads it (since
// external-dns v0.22.0, kubernetes-sigs/external-dns#6478; before, under a
// random label, which the etcd plugin never answers), and ptrCorefile's
// views answer them as TestPTR's records: the internal view serves both,
// the external view only the public address's.
func TestKubernetesPipelinePTR(t *testing.T) {
	etcd := startEtcd(t)
	api := startAPIServer(t, etcd.Endpoint())
	k := newKubectl(t, api)
	k.run(t, nil, "wait", "--for=create", "namespace/default", "--timeout=1m")
	app, shop := "app."+exampleDomain, "shop."+exampleDomain
	k.apply(t, ingress("app", app), ingress("shop", shop))
	k.setStatus(t, "ingress/app", ingressStatus(exampleInternal))
	k.setStatus(t, "ingress/shop", ingressStatus("198.51.100.20"))
	runExternalDNS(t, api, coreDNSProvider(etcd.Endpoint(), "/skydns/"),
		"--create-ptr",
		"--managed-record-types=A", "--managed-record-types=AAAA", "--managed-record-types=CNAME",
		"--managed-record-types=PTR",
		// The reverse zones, beside exampleDomain: external-dns writes
		// no record outside its domain filter.
		"--domain-filter=168.192.in-addr.arpa", "--domain-filter=51.198.in-addr.arpa")
	for reverse, host := range map[string]string{"51.0.168.192.in-addr.arpa": app, "20.100.51.198.in-addr.arpa": shop} {
		checkPTRKey(t, etcd.Client(), reverse, host)
	}
	c := startCoreDNS(t, strings.ReplaceAll(ptrCorefile, "ETCD", etcd.Endpoint()))
	runCases(t, c, ptrCases(app, shop))
}

// checkPTRKey fails t unless cli holds the PTR record of reverse to host at
// the exact key of reverse under /skydns, and nothing below it.
func checkPTRKey(t *testing.T, cli *clientv3.Client, reverse, host string) {
	t.Helper()
	key := externaldns.Key("/skydns", reverse)
	resp, err := cli.Get(context.Background(), key, clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	var got []string
	for _, kv := range resp.Kvs {
		if k := string(kv.Key); k == key || strings.HasPrefix(k, key+"/") {
			got = append(got, k+" "+string(kv.Value))
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], key+" ") || !strings.Contains(got[0], `"host":"`+host+`"`) {
		t.Errorf("etcd holds %q for %s, want one key %s with host %s", got, reverse, key, host)
	}
}
