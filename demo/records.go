package main

import (
	"context"
	"fmt"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/samplezone"
)

// sampleRecords are what external-dns would write for a few Ingresses.
var sampleRecords = samplezone.Demo()

// putSampleRecords writes sampleRecords into etcd under /skydns.
func putSampleRecords(ctx context.Context, etcd *etcdtest.Server) error {
	for _, r := range sampleRecords {
		if err := externaldns.Put(ctx, etcd.Client(), externaldns.DefaultPrefix, r); err != nil {
			return err
		}
	}
	return nil
}

// tryIt lists queries to try, with what each view answers.
var tryIt = []struct{ query, internal, external string }{
	{"app.example.com A", "192.168.0.51", "203.0.113.10, TTL 900"},
	{"app.example.com AAAA", "fd00::51", "2001:db8::10, TTL 900"},
	{"shop.example.com A", "192.168.0.61 192.168.0.62 198.51.100.20", "203.0.113.10 (once) 198.51.100.20 (public, as is)"},
	{"www.example.com A", "CNAME app.example.com, 192.168.0.51", "CNAME app.example.com, 203.0.113.10"},
	{"www.example.com CNAME", "app.example.com", "app.example.com"},
	{"public.example.com A", "198.51.100.30", "198.51.100.30 (public, as is)"},
	{"a-app.example.com TXT", `"heritage=external-dns,..." (ownership record)`, "NXDOMAIN (ownership records stay inside)"},
	{"example.org A", "REFUSED", "REFUSED (no open resolver)"},
}

// printTryIt prints how to query both views.
func printTryIt(endpoint string) {
	fmt.Printf(`
globaladdr demo is running: one etcd tree (%s, prefix /skydns), two views.
  internal view: 127.0.0.1:1053    external view: 127.0.0.1:1054 (global 203.0.113.10 and 2001:db8::10, TTL 900)

Try:
`, endpoint)
	for _, t := range tryIt {
		fmt.Printf("  dig @127.0.0.1 -p 1053 %-24s # internal: %s\n", t.query, t.internal)
		fmt.Printf("  dig @127.0.0.1 -p 1054 %-24s # external: %s\n", t.query, t.external)
	}
	fmt.Println("\nPress Ctrl-C to stop.")
}
