package main

import (
	"context"
	"fmt"
	"strings"

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

// tryIt lists queries to try, with what each view answers, as dig shows
// it: the records' TTLs (the view's ttl 900 for a rewritten record, but one
// TTL for an RRset, the lowest, where a rewritten record stands beside a
// public one) and external-dns's ownership text with its own quotes.
var tryIt = []struct{ query, internal, external string }{
	{"app.example.com A", "192.168.0.51, TTL 300", "203.0.113.10, TTL 900 (the view's ttl)"},
	{"app.example.com AAAA", "fd00::51, TTL 300", "2001:db8::10, TTL 900"},
	{"shop.example.com A", "192.168.0.61 192.168.0.62 198.51.100.20, TTL 300",
		"203.0.113.10 (once) 198.51.100.20 (public, as is), TTL 300 (one RRset, one TTL: the lowest)"},
	{"www.example.com A", "CNAME app.example.com, 192.168.0.51, TTL 300", "CNAME app.example.com TTL 300, 203.0.113.10 TTL 900"},
	{"www.example.com CNAME", "app.example.com, TTL 300", "app.example.com, TTL 300"},
	{"public.example.com A", "198.51.100.30, TTL 300", "198.51.100.30 (public, as is), TTL 300"},
	{"a-app.example.com TXT", `"\"heritage=external-dns,...\"", TTL 300 (ownership record, quotes and all)`, "NXDOMAIN (ownership records stay inside)"},
	{"example.org A", "REFUSED", "REFUSED (no open resolver)"},
}

// tryWrite is the record the demo asks to write, as external-dns writes an
// Ingress's (a JSON value under the name's path, with a random last label),
// and what each view then answers for its name.
var tryWrite = struct{ key, value, name, internal, external string }{
	key:      "/skydns/com/example/new/1a2b3c4d",
	value:    `{"host":"192.168.0.99","targetstrip":1}`,
	name:     "new.example.com",
	internal: "192.168.0.99",
	external: "203.0.113.10",
}

// printTryIt prints the demo's Corefile, the queries to try on both views,
// and a record to write with etcdctl, with what both views then answer.
func printTryIt(endpoint, corefile string) {
	fmt.Printf(`
globaladdr demo is running: one etcd tree (%s, prefix /skydns), two views.
  internal view: 127.0.0.1:1053    external view: 127.0.0.1:1054 (global 203.0.113.10 and 2001:db8::10, TTL 900)

Its Corefile:

%s
Try:
`, endpoint, indent(corefile))
	for _, t := range tryIt {
		fmt.Printf("  dig @127.0.0.1 -p 1053 %-24s # internal: %s\n", t.query, t.internal)
		fmt.Printf("  dig @127.0.0.1 -p 1054 %-24s # external: %s\n", t.query, t.external)
	}
	w := tryWrite
	fmt.Printf(`
Write a record as external-dns does (etcdctl: Debian package etcd-client), and both views answer it at once:

  etcdctl --endpoints %s put %s '%s'
  dig +short @127.0.0.1 -p 1053 %s   # %s (internal view: as written)
  dig +short @127.0.0.1 -p 1054 %s   # %s (external view: the global address)

Delete it (etcdctl --endpoints %s del %s) and both answer NXDOMAIN.
`, endpoint, w.key, w.value, w.name, w.internal, w.name, w.external, endpoint, w.key)
	fmt.Println("\nPress Ctrl-C to stop.")
}

// indent returns text with each line indented by two spaces.
func indent(text string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n  ") + "\n"
}
