package etcdzone

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/etcd"
	"github.com/coredns/coredns/plugin/file"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"

	"github.com/miekg/dns"
)

// benchHosts is the size of the benchmarks' zone.
const benchHosts = 1000

// benchRecords are benchHosts hosts, as external-dns writes them.
func benchRecords() []externaldns.Record {
	records := make([]externaldns.Record, benchHosts)
	for i := range records {
		records[i] = externaldns.Record{Name: fmt.Sprintf("h%d.example.com", i), Type: "A", Targets: []string{"192.168.0.51"}}
	}
	return records
}

// benchmark asks h for a host's A record, b.N times.
func benchmark(b *testing.B, h plugin.Handler) {
	ctx, w := context.Background(), &test.ResponseWriter{}
	r := new(dns.Msg)
	r.SetQuestion("h500.example.com.", dns.TypeA)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeDNS(ctx, w, r)
	}
}

// BenchmarkQueryEtcdzone is an A query answered by etcdzone, from memory.
func BenchmarkQueryEtcdzone(b *testing.B) {
	clog.Discard() // benchstat reads the output
	x, _ := newTestZone(b, benchRecords()...)
	benchmark(b, x)
}

// BenchmarkQueryEtcd is the same query answered by the etcd plugin, from
// etcd.
func BenchmarkQueryEtcd(b *testing.B) {
	clog.Discard() // benchstat reads the output
	x, _ := newTestZone(b, benchRecords()...)
	benchmark(b, x.etcd)
}

// BenchmarkQueryFile is the same query answered by the file plugin, from
// the same zone in a zone file.
func BenchmarkQueryFile(b *testing.B) {
	clog.Discard() // benchstat reads the output
	var zone strings.Builder
	fmt.Fprintf(&zone, testSOA+"\nexample.com. 3600 IN NS ns1.example.net.\n", 1)
	for i := range benchHosts {
		fmt.Fprintf(&zone, "h%d.example.com. 300 IN A 192.168.0.51\n", i)
	}
	z, err := file.Parse(strings.NewReader(zone.String()), "example.com.", "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	benchmark(b, file.File{Zones: file.Zones{Z: map[string]*file.Zone{"example.com.": z}, Names: []string{"example.com."}}})
}

// BenchmarkNewZones makes the zones of an etcd plugin of 10,000 zones, each
// with one zone inside, as start-up does: finding each zone's etcd zone and
// its apex key, and checking that the block reaches it.
func BenchmarkNewZones(b *testing.B) {
	names := make([]string, 0, 10000)
	for i := range cap(names) / 2 {
		names = append(names, fmt.Sprintf("z%d.example.", i), fmt.Sprintf("in.z%d.example.", i))
	}
	x := &EtcdZone{etcd: &etcd.Etcd{Zones: names, PathPrefix: "skydns"}, corefile: config.Config{Apex: testApex}, blockZones: names, tree: &sharedTree{}}
	b.ReportAllocs()
	for b.Loop() {
		zones, err := x.newZones("dns://bench", nil)
		if err != nil || zones[1].ApexKey() != "/skydns/example/z0/in" {
			b.Fatalf("%v; apex key of %s: %s", err, zones[1].Name(), zones[1].ApexKey())
		}
	}
}
