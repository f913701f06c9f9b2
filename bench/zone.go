//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// zoneCorefile serves zone (%[1]s) on port %[2]d with %[3]s: etcdzone
// from etcd, or the file plugin from a zone file; it exports coredns's
// metrics on port %[4]d (and the first block the pprof plugin's handlers,
// among its directives).
const zoneCorefile = `%[1]s:%[2]d {
	bind 127.0.0.1
	prometheus 127.0.0.1:%[4]d
	%[3]s
}
`

// settle is how long the zone measurement lets coredns be after its load
// before it reads its resident memory: the garbage of the load is returned
// to the system by then.
const settle = 10 * time.Second

// zoneLoad measures etcdzone holding a zone of n hosts as external-dns
// writes them (one A record each, no ownership records): the time from
// coredns's start to the zone's first answer, and coredns's resident memory
// a while after, against the same for an empty zone in as many blocks (the
// difference is the zone's), and against the file plugin loading the same
// zone from a file.
// The empty zone is measured before the hosts are written: etcdzone reads
// the whole etcd tree, every zone's keys, whichever zones it serves.
func zoneLoad(ctx context.Context, o options, cli *clientv3.Client, etcdEndpoint, dir string) error {
	fmt.Printf("## etcdzone: a zone of %d records\n\n", o.zone)
	full := subtreeShape{name: "zone", apex: "big.example.net.", addr: func(i int) string { return fmt.Sprintf("10.40.%d.%d", i>>8&0xff, i&0xff) }}
	zoneFile, emptyFile := filepath.Join(dir, "db.big"), filepath.Join(dir, "db.empty")
	if err := writeHosts(zoneFile, full, o.zone); err != nil {
		return err
	}
	if err := writeHosts(emptyFile, subtreeShape{apex: "empty.example.net."}, 0); err != nil {
		return err
	}
	etcdzone := func(zone string) string {
		return fmt.Sprintf("etcdzone\n\tetcd %s {\n\t\tendpoint %s\n\t}", strings.TrimSuffix(zone, "."), etcdEndpoint)
	}
	external := func(zone string) string {
		return fmt.Sprintf("globaladdr %s\n\t%s", globalV4, etcdzone(zone))
	}
	fmt.Printf("\n| run | records | start → first answer | resident memory %[1]s after | Go heap in use %[1]s after | Go heap live after a forced collection |\n|---|---|---|---|---|---|\n", settle)
	runs := []struct {
		name, zone string
		blocks     []string // each block's directives
		records    int
		base       int // the run of the same plugin with an empty zone
	}{
		{"etcdzone, empty zone (nothing in etcd)", "empty.example.net.", []string{etcdzone("empty.example.net.")}, 0, 0},
		{"etcdzone, empty zone, both views (two blocks)", "empty.example.net.", []string{etcdzone("empty.example.net."), external("empty.example.net.")}, 0, 1},
		{"etcdzone, internal view", full.apex, []string{etcdzone(full.apex)}, o.zone, 0},
		{"etcdzone, external view", full.apex, []string{external(full.apex)}, o.zone, 0},
		{"etcdzone, both views of one tree (two blocks)", full.apex, []string{etcdzone(full.apex), external(full.apex)}, o.zone, 1},
		{"file, empty zone", "empty.example.net.", []string{"file " + emptyFile + " empty.example.net"}, 0, 5},
		{"file", full.apex, []string{"file " + zoneFile}, o.zone, 5},
	}
	rss, heap, live := make([]int64, len(runs)), make([]int64, len(runs)), make([]int64, len(runs))
	for i, run := range runs {
		if i == 2 { // the runs after etcdzone's empty zones hold the hosts
			written := time.Now()
			if err := loadSubtree(ctx, cli, full, o.zone); err != nil {
				return err
			}
			fmt.Printf("| (%d hosts written into etcd in %s) | | | | | |\n", o.zone, time.Since(written).Round(time.Millisecond))
		}
		start, m, err := startZone(ctx, o, dir, run.zone, fmt.Sprint("zone", i), run.blocks...)
		if err != nil {
			return err
		}
		rss[i], heap[i], live[i] = m.rss, m.heap, m.live
		fmt.Printf("| %s | %d | %s | %.1f MiB | %.1f MiB | %.1f MiB |\n", run.name, run.records, start.Round(time.Millisecond), mib(m.rss), mib(m.heap), mib(m.live))
	}
	per := float64(o.zone) / 10000
	// Each zone over the empty zone of its plugin.
	for _, m := range []struct {
		what string
		of   []int64
	}{{"Resident memory", rss}, {"Go heap in use", heap}, {"Go heap live after a forced collection", live}} {
		zone := func(i int) float64 { return mib(m.of[i]-m.of[runs[i].base]) / per }
		fmt.Printf("\n%s per 10,000 records (over the empty zone's, in as many blocks): etcdzone internal view %.1f MiB, external view %.1f MiB, both views %.1f MiB; file %.1f MiB. ", m.what, zone(2), zone(3), zone(4), zone(6))
		fmt.Printf("etcdzone over file: internal view %.2f, external view %.2f (goal ≤ 1). Both views over one: %.2f × the internal view, %.2f × the external view (goal ≤ 1.3).\n", zone(2)/zone(6), zone(3)/zone(6), zone(4)/zone(2), zone(4)/zone(3))
	}
	fmt.Println()
	return nil
}

// writeHosts writes the zone file of s's apex with n hosts, as loadSubtree
// writes them into etcd.
func writeHosts(path string, s subtreeShape, n int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s\n@ 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 3600 600 1209600 300\n@ 3600 IN NS ns1.example.org.\n", s.apex)
	for i := range n {
		fmt.Fprintf(&b, "h%05d %d IN A %s\n", i, recordTTL, s.addr(i))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// startZone starts coredns with one server block for zone per element of
// blocks, each holding those directives on a port of its own, waits for
// the zone's first answer from every block (the SOA, which etcdzone gives
// once the zone is loaded), and returns how long that took, and coredns's
// memory a while after.
func startZone(ctx context.Context, o options, dir, zone, name string, blocks ...string) (took time.Duration, m zoneMemory, err error) {
	var (
		conf  strings.Builder
		ports []int
	)
	metricsPort, err := freePort()
	if err != nil {
		return 0, m, err
	}
	pprofPort, err := freePort()
	if err != nil {
		return 0, m, err
	}
	for i, directives := range blocks {
		port, err := freePort()
		if err != nil {
			return 0, m, err
		}
		ports = append(ports, port)
		if i == 0 {
			directives += fmt.Sprintf("\n\tpprof 127.0.0.1:%d", pprofPort)
		}
		fmt.Fprintf(&conf, zoneCorefile, strings.TrimSuffix(zone, "."), port, directives, metricsPort)
	}
	srv, start, err := launchCorefile(o, dir, name, conf.String())
	if err != nil {
		return 0, m, err
	}
	defer srv.stop()
	for _, port := range ports {
		if err := srv.waitSOA(ctx, port, zone, 5*time.Minute); err != nil {
			return 0, m, err
		}
	}
	took = time.Since(start)
	if err := settleMemory(ctx); err != nil {
		return 0, m, err
	}
	m, err = readZoneMemory(srv, metricsPort, pprofPort)
	return took, m, err
}

// zoneMemory is what startZone reads of coredns's memory: its resident
// size and Go heap in use, a while after the zone's load, and then its live
// heap after a forced collection (what the zone holds, without the garbage
// of the load that the collector has not yet taken).
type zoneMemory struct{ rss, heap, live int64 }

// readZoneMemory reads srv's memory, from /proc, its metrics on
// metricsPort, and (forcing a collection through the pprof plugin's heap
// profile on pprofPort) its metrics again.
func readZoneMemory(srv *coreDNS, metricsPort, pprofPort int) (m zoneMemory, err error) {
	if m.rss, _, err = srv.memory(); err != nil {
		return m, err
	}
	h, err := metric(metricsPort, "go_memstats_heap_inuse_bytes")
	if err != nil {
		return m, err
	}
	m.heap = int64(h)
	c := http.Client{Timeout: time.Minute}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", pprofPort))
	if err != nil {
		return m, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return m, err
	}
	l, err := metric(metricsPort, "go_memstats_heap_alloc_bytes")
	m.live = int64(l)
	return m, err
}
