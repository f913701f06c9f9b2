// Package samplezone holds the records that the demo and the benchmarks
// serve, as external-dns writes them, so that the measurements of
// BENCHMARKS.md and the demo describe the same zones. It holds data only:
// writing it into etcd or a zone file is its callers'.
package samplezone

import (
	"fmt"
	"strings"

	"github.com/globaladdr/globaladdr/internal/externaldns"
)

// Demo returns what external-dns would write for a few Ingresses: the
// demo's zone.
func Demo() []externaldns.Record {
	return []externaldns.Record{
		{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}, Resource: "ingress/default/app"},
		{Name: "app.example.com", Type: "AAAA", Targets: []string{"fd00::51"}, Resource: "ingress/default/app"},
		{Name: "shop.example.com", Type: "A", Targets: []string{"192.168.0.61", "192.168.0.62", "198.51.100.20"}, Resource: "ingress/shop/shop"},
		{Name: "www.example.com", Type: "CNAME", Targets: []string{"app.example.com"}, Resource: "ingress/default/www"},
		{Name: "public.example.com", Type: "A", Targets: []string{"198.51.100.30"}, Resource: "service/default/public"},
	}
}

// Hosts returns the benchmarks' zone: 200 Ingress hosts with an internal
// IPv4 address and their ownership records, every fourth also with an
// internal IPv6 address, and 20 Services with a public address, which the
// external view passes unchanged; every record with TTL ttl.
func Hosts(ttl uint32) []externaldns.Record {
	var rs []externaldns.Record
	for i := range 200 {
		name := fmt.Sprintf("app-%03d.example.com", i)
		resource := "ingress/default/" + strings.TrimSuffix(name, ".example.com")
		rs = append(rs, externaldns.Record{Name: name, Type: "A", Targets: []string{fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)}, TTL: ttl, Resource: resource})
		if i%4 == 0 {
			rs = append(rs, externaldns.Record{Name: name, Type: "AAAA", Targets: []string{fmt.Sprintf("fd00::1:%x", i+1)}, TTL: ttl, Resource: resource})
		}
	}
	for i := range 20 {
		name := fmt.Sprintf("pub-%02d.example.com", i)
		rs = append(rs, externaldns.Record{Name: name, Type: "A", Targets: []string{fmt.Sprintf("198.51.100.%d", i+1)}, TTL: ttl, Resource: "service/default/" + name[:6]})
	}
	return rs
}
