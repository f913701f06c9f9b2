//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// manyZonesParent is the parent of the many zones, themselves no zone.
const manyZonesParent = "many.example.net."

// hostsPerZone is the records of each of the many zones, besides SOA and NS.
const hostsPerZone = 5

// manyZoneName returns the i-th of the many zones.
func manyZoneName(i int) string { return fmt.Sprintf("z%05d.%s", i, manyZonesParent) }

// manyZones measures a process serving o.zones zones of hostsPerZone
// records each: etcdzone in one server block, etcdzone in o.zoneBlocks
// blocks, and the auto plugin with the same zones from zone files in one
// block; for each, the time from coredns's start until a sample of the
// zones answers its SOA, then the time of a pass over every zone, and
// coredns's resident memory a while after.
func manyZones(ctx context.Context, o options, cli *clientv3.Client, etcdEndpoint, dir string) error {
	fmt.Printf("## Many zones: %d zones of %d records each\n\n", o.zones, hostsPerZone)
	zones := make([]string, o.zones)
	for i := range zones {
		zones[i] = manyZoneName(i)
	}
	written := time.Now()
	if err := loadManyZones(ctx, cli, zones); err != nil {
		return err
	}
	zoneDir := filepath.Join(dir, "zones")
	if err := writeManyZones(zoneDir, zones); err != nil {
		return err
	}
	fmt.Printf("- written into etcd and %s in %s\n", zoneDir, time.Since(written).Round(time.Millisecond))
	if o.compact {
		if err := compactEtcd(ctx, cli); err != nil {
			return err
		}
	}
	etcdzone := func(zs []string) string {
		return fmt.Sprintf("etcdzone\n\tetcd %s {\n\t\tendpoint %s\n\t}", strings.Join(zs, " "), etcdEndpoint)
	}
	blocks := max(o.zoneBlocks, 1)
	per := (len(zones) + blocks - 1) / blocks
	var split []serverBlock
	for i := 0; i < len(zones); i += per {
		zs := zones[i:min(i+per, len(zones))]
		split = append(split, serverBlock{keys: zs, directives: etcdzone(zs)})
	}
	runs := []struct {
		name   string
		blocks []serverBlock
	}{
		{"auto, one block", []serverBlock{{keys: []string{manyZonesParent}, directives: fmt.Sprintf("auto %s {\n\t\tdirectory %s db\\.(.*) {1}\n\t}", manyZonesParent, zoneDir)}}},
		{"etcdzone, one block", []serverBlock{{keys: []string{manyZonesParent}, directives: etcdzone(zones)}}},
		{fmt.Sprintf("etcdzone, %d blocks", len(split)), split},
	}
	fmt.Printf("| run | ready: every 100th zone answers after | then a pass over every zone | resident memory %s after |\n|---|---|---|---|\n", settle)
	var took [3]time.Duration
	var rss [3]int64
	for i, run := range runs {
		var (
			pass time.Duration
			err  error
		)
		took[i], pass, rss[i], err = startZones(ctx, o, dir, fmt.Sprint("zones", i), run.blocks, zones)
		if err != nil {
			return fmt.Errorf("%s: %w", run.name, err)
		}
		fmt.Printf("| %s | %s | %s | %.1f MiB |\n", run.name, took[i].Round(time.Millisecond), pass.Round(time.Millisecond), mib(rss[i]))
	}
	fmt.Printf("\n| etcdzone over auto | ready time | memory | goal |\n|---|---|---|---|\n")
	for i := 1; i < len(runs); i++ {
		fmt.Printf("| %s | %.2f | %.2f | ≤ 2 |\n", runs[i].name, float64(took[i])/float64(took[0]), float64(rss[i])/float64(rss[0]))
	}
	fmt.Println()
	return nil
}

// serverBlock is a server block of the many zones: its keys and directives.
type serverBlock struct {
	keys       []string
	directives string
}

// loadManyZones writes hostsPerZone hosts of each of zones into etcd, as
// external-dns writes them (no ownership records).
func loadManyZones(ctx context.Context, cli *clientv3.Client, zones []string) error {
	return parallel(zones, func(zone string) error {
		for h := range hostsPerZone {
			r := externaldns.Record{Name: fmt.Sprintf("h%d.%s", h, strings.TrimSuffix(zone, ".")), Type: "A", Targets: []string{fmt.Sprintf("10.50.0.%d", h+1)}, TTL: recordTTL}
			if err := externaldns.Put(ctx, cli, "", r); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeManyZones writes each of zones, as loadManyZones writes it into
// etcd, as the file dir/db.ZONE (ZONE without its final dot).
func writeManyZones(dir string, zones []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, zone := range zones {
		var b strings.Builder
		fmt.Fprintf(&b, "$ORIGIN %s\n@ 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 3600 600 1209600 300\n@ 3600 IN NS ns1.example.org.\n", zone)
		for h := range hostsPerZone {
			fmt.Fprintf(&b, "h%d %d IN A 10.50.0.%d\n", h, recordTTL, h+1)
		}
		if err := os.WriteFile(filepath.Join(dir, "db."+strings.TrimSuffix(zone, ".")), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// startZones starts coredns with blocks, all on one port, and returns the
// time until a sample of zones (every hundredth, and the last) answers its
// SOA with NOERROR, the time a pass over every zone then takes (at least
// what the asking costs, when every zone is loaded by then), and coredns's
// resident memory a while after. Asking every zone would time the plugin's
// answers as much as its load: auto matches each query against its list of
// zones.
func startZones(ctx context.Context, o options, dir, name string, blocks []serverBlock, zones []string) (took, pass time.Duration, rss int64, err error) {
	port, err := freePort()
	if err != nil {
		return 0, 0, 0, err
	}
	var conf strings.Builder
	pprofPort, metricsPort := 0, 0
	if o.profile != "" {
		if pprofPort, err = freePort(); err != nil {
			return 0, 0, 0, err
		}
		if metricsPort, err = freePort(); err != nil {
			return 0, 0, 0, err
		}
		fmt.Fprintf(&conf, ".:%d {\n\tbind 127.0.0.1\n\tpprof 127.0.0.1:%d\n\tprometheus 127.0.0.1:%d\n\twhoami\n}\n", port, pprofPort, metricsPort)
	}
	for _, b := range blocks {
		keys := make([]string, len(b.keys))
		for i, k := range b.keys {
			keys[i] = fmt.Sprintf("%s:%d", strings.TrimSuffix(k, "."), port)
		}
		fmt.Fprintf(&conf, "%s {\n\tbind 127.0.0.1\n\t%s\n}\n", strings.Join(keys, " "), b.directives)
	}
	srv, start, err := launchCorefile(o, dir, name, conf.String())
	if err != nil {
		return 0, 0, 0, err
	}
	defer srv.stop()
	startProfile := make(chan error, 1)
	if pprofPort != 0 {
		// A CPU profile of the start, from when pprof listens.
		go func() {
			url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=10", pprofPort)
			err := saveProfile(url, filepath.Join(o.profile, name+".start.pprof"))
			for tries := 0; err != nil && tries < 200; tries++ {
				time.Sleep(50 * time.Millisecond) // polling pprof's listener
				err = saveProfile(url, filepath.Join(o.profile, name+".start.pprof"))
			}
			startProfile <- err
		}()
	} else {
		startProfile <- nil
	}
	if err := srv.waitZones(ctx, port, sample(zones), 10*time.Minute); err != nil {
		return 0, 0, 0, err
	}
	took = time.Since(start)
	again := time.Now()
	if err := srv.waitZones(ctx, port, zones, 10*time.Minute); err != nil {
		return 0, 0, 0, err
	}
	pass = time.Since(again)
	if err := <-startProfile; err != nil {
		return 0, 0, 0, err
	}
	if err := settleMemory(ctx); err != nil {
		return 0, 0, 0, err
	}
	if rss, _, err = srv.memory(); err != nil || pprofPort == 0 {
		return took, pass, rss, err
	}
	heap := filepath.Join(o.profile, name+".heap")
	for kind, file := range map[string]string{"heap": heap, "goroutine": filepath.Join(o.profile, name+".goroutine")} {
		if err := saveProfile(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/%s", pprofPort, kind), file); err != nil {
			return 0, 0, 0, err
		}
	}
	goroutines, err := metric(metricsPort, "go_goroutines")
	if err != nil {
		return 0, 0, 0, err
	}
	fmt.Printf("(%.0f goroutines; heap profile: go tool pprof -sample_index inuse_space -top %s %s; goroutines: %s.goroutine)\n", goroutines, o.coredns, heap, strings.TrimSuffix(heap, ".heap"))
	return took, pass, rss, err
}

// sample returns every hundredth of zones, and the last.
func sample(zones []string) []string {
	var s []string
	for i := 0; i < len(zones); i += 100 {
		s = append(s, zones[i])
	}
	return append(s, zones[len(zones)-1])
}

// waitZones waits, a few zones at a time, until every one of zones answers
// on port.
func (c *coreDNS) waitZones(ctx context.Context, port int, zones []string, within time.Duration) error {
	return parallel(zones, func(zone string) error { return c.waitSOA(ctx, port, zone, within) })
}

// compactEtcd compacts etcd's history up to its current revision.
func compactEtcd(ctx context.Context, cli *clientv3.Client) error {
	resp, err := cli.Get(ctx, manyZonesParent, clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("compact etcd: %w", err)
	}
	fmt.Printf("- etcd compacted at revision %d\n", resp.Header.Revision)
	return nil
}
