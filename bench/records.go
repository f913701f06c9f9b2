//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/samplezone"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// The external view's configuration in every "with" block, and what its
// answers must show.
const (
	globalV4   = "203.0.113.10"
	globalV6   = "2001:db8::10"
	globalTTL  = 900
	recordTTL  = 300
	zoneSOA    = "@ 300 IN SOA ns.dns.example.com. hostmaster.example.com. 1 7200 1800 86400 30"
	zoneOrigin = "example.com."
)

// sampleRecords returns what the benchmark serves: samplezone.Hosts, 200
// Ingress hosts with internal addresses and 20 Services with public ones.
func sampleRecords() []externaldns.Record { return samplezone.Hosts(recordTTL) }

// loadEtcd writes rs into etcd as external-dns's coredns provider does.
func loadEtcd(ctx context.Context, cli *clientv3.Client, rs []externaldns.Record) error {
	for _, r := range rs {
		if err := externaldns.Put(ctx, cli, "", r); err != nil {
			return err
		}
	}
	return nil
}

// writeZone writes rs, without ownership records, as the zone file of
// example.com for the file backend.
func writeZone(path string, rs []externaldns.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s\n%s\n@ 300 IN NS ns.dns.example.com.\nns.dns 300 IN A 192.0.2.53\n", zoneOrigin, zoneSOA)
	for _, r := range rs {
		for _, t := range r.Targets {
			fmt.Fprintf(&b, "%s. %d IN %s %s\n", r.Name, r.TTL, r.Type, t)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// queries returns the comparison's queries: one per name and type of rs, so
// that three in four answers hold an internal address to rewrite.
func queries(rs []externaldns.Record) []string {
	var qs []string
	for _, r := range rs {
		qs = append(qs, r.Name+" "+r.Type)
	}
	return qs
}

// soakQueries returns the soak's queries, names and types mixed as an
// external client may ask them: besides those of queries, each name's TXT,
// its external-dns ownership name ("a-app-000.example.com TXT", NXDOMAIN in
// the external view) and a nonexistent name (NXDOMAIN), the public names'
// AAAA, and the apex's SRV, TXT and A.
func soakQueries(rs []externaldns.Record) []string {
	qs := []string{zoneOrigin + " SRV", zoneOrigin + " TXT", zoneOrigin + " A"}
	for _, r := range rs {
		qs = append(qs, r.Name+" "+r.Type, r.Name+" TXT", strings.ToLower(r.Type)+"-"+r.Name+" TXT", "nx-"+r.Name+" A")
		if strings.HasPrefix(r.Name, "pub-") {
			qs = append(qs, r.Name+" AAAA")
		}
	}
	return qs
}

// writeQueries writes qs, one "name type" a line, as dnsperf's input.
func writeQueries(path string, qs []string) error {
	return os.WriteFile(path, []byte(strings.Join(qs, "\n")+"\n"), 0o644)
}
