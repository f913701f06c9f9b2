//go:build linux

// Command bench measures what globaladdr and rrl cost a running CoreDNS. It
// measures the coredns binary that make builds, from outside, as clients
// would: it links no plugin's code.
//
// It starts an embedded etcd holding records as external-dns writes them,
// and the coredns binary with pairs of server blocks that differ only by
// globaladdr, on four paths (etcd behind cache, etcd, etcdzone, file), and a
// pair of external views behind cache that differ only by rrl (path rrl,
// rates that limit nothing). It runs dnsperf
// against each block of a pair in turn, round after round, and prints the
// queries per second, the with/without ratio of each path (median of the
// rounds), the external view on etcdzone over the same view on etcd and on
// file, and coredns's peak RSS; then the propagation time from an etcd
// write to the external view's first rewritten answer; and the time per apex
// query of a 12,000-host etcd subtree, external block against internal.
//
// With -soak DURATION it instead runs dnsperf with mixed names and types
// against one external block for that long and checks that no query is lost,
// that coredns's RSS stays flat and that its goroutines do not grow. With
// -transfer N it times AXFRs of an etcdzone zone of N hosts; with -zone N,
// etcdzone's start with a zone of N records in either view and both, and
// its resident memory; with -zones N, the time until each of N small zones
// answers and the memory, etcdzone against auto. With -percore N it
// compares, each pinned to one CPU, the shipped external.Corefile on a zone
// of N hosts with whoami, with its chain cut down, with the file plugin,
// and with BIND 9 and Knot; with -signed instead, signed-primary.Corefile
// and BIND 9 serving the zone signed, each with DO and without.
//
// Everything listens on loopback, on ports that were free; everything the
// command starts is stopped before it exits. It needs dnsperf (Debian
// package dnsperf). See BENCHMARKS.md.
//
// Usage:
//
//	go run ./bench [-coredns ./coredns] [-rounds 5] [-duration 5s] [-paths rrl,etcd+cache] [-soak 10m]
//	go run ./bench -percore 2000 [-profile DIR -profile-of external,whoami]
//	go run ./bench -percore 2000 -signed
//	go run ./bench -zones 10000 [-zone-blocks 100]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
)

// options are the command's flags.
type options struct {
	coredns     string
	rounds      int
	duration    time.Duration
	clients     int
	samples     int
	soak        time.Duration
	subtree     int
	transfer    int
	zone        int
	perCore     int
	signed      bool
	zones       int
	zoneBlocks  int
	compact     bool
	examples    string
	profile     string
	profileOf   string
	soakPath    string
	paths       string
	keepWorkDir bool
}

func main() {
	var o options
	flag.StringVar(&o.coredns, "coredns", "./coredns", "the CoreDNS binary to measure (make build)")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds; each runs dnsperf on every path, without then with globaladdr")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "length of one dnsperf run")
	flag.IntVar(&o.clients, "clients", 4, "dnsperf clients (-c)")
	flag.IntVar(&o.samples, "propagation", 20, "propagation samples per path")
	flag.IntVar(&o.subtree, "subtree", 12000, "hosts in the etcd subtree whose apex query the internal and external blocks are timed on (0: skip)")
	flag.IntVar(&o.transfer, "transfer", 0, "instead of comparing: time AXFRs of an etcd zone of this many hosts (etcdzone) and report coredns's peak RSS")
	flag.IntVar(&o.zone, "zone", 0, "instead of comparing: time etcdzone's start with a zone of this many records, and report its resident memory")
	flag.IntVar(&o.perCore, "percore", 0, "instead of comparing: the per-core comparison of the shipped external.Corefile (rrl removed) with whoami, its chain cut down, the file plugin, BIND 9 and Knot, on a zone of this many hosts (issue 28: 2000)")
	flag.BoolVar(&o.signed, "signed", false, "with -percore: instead, signed-primary.Corefile's external view and BIND 9 serving the zone signed by dnssec-signzone (ECDSAP256SHA256, NSEC3 iterations 0), each with DO and without (issue 31)")
	flag.IntVar(&o.zones, "zones", 0, "instead of comparing: the time until this many zones of 5 records answer (a sample, then all), and the resident memory, etcdzone in one block and in -zone-blocks blocks against auto (issue 28: 10000)")
	flag.IntVar(&o.zoneBlocks, "zone-blocks", 100, "with -zones: the server blocks the zones are spread over")
	flag.BoolVar(&o.compact, "compact", false, "with -zones: compact etcd's history once the zones are written, as an etcd with auto-compaction would have (etcdzone's start then reads no deletions from before)")
	flag.StringVar(&o.examples, "examples", "corefile-examples", "the directory of the shipped Corefiles (-percore)")
	flag.StringVar(&o.profile, "profile", "", "with -percore: write CPU profiles of the servers -profile-of names, under dnsperf, into this directory; with -zones: a heap profile of each run")
	flag.StringVar(&o.profileOf, "profile-of", "external", "with -profile: the coredns servers profiled, comma-separated: whoami, external, external-no-prometheus, external-no-cache, file-no-cache, etcdzone-globaladdr, etcdzone")
	flag.DurationVar(&o.soak, "soak", 0, "instead of comparing: run dnsperf with mixed queries this long against one external block and sample coredns's RSS and goroutines")
	flag.StringVar(&o.soakPath, "soak-path", "file", "the path the soak runs on: etcd+cache, etcd or file")
	flag.StringVar(&o.paths, "paths", "", "the paths to compare, comma-separated (default: all of etcd+cache, etcd, etcdzone, file, rrl)")
	flag.BoolVar(&o.keepWorkDir, "keep", false, "keep the work directory (Corefile, zone, queries, coredns's log)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run sets up etcd and coredns, measures, and tears everything down.
func run(ctx context.Context, o options) error {
	dnsperfPath, err := lookDNSPerf()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "globaladdr-bench-")
	if err != nil {
		return err
	}
	if o.keepWorkDir {
		defer fmt.Printf("work directory: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
	}
	etcd, err := etcdtest.Start(filepath.Join(dir, "etcd"))
	if err != nil {
		return err
	}
	defer etcd.Close()
	if o.transfer > 0 {
		return transfer(ctx, o, etcd.Client(), etcd.Endpoint(), dir)
	}
	if o.zone > 0 {
		return zoneLoad(ctx, o, etcd.Client(), etcd.Endpoint(), dir)
	}
	if o.zones > 0 {
		return manyZones(ctx, o, etcd.Client(), etcd.Endpoint(), dir)
	}
	if o.perCore > 0 {
		printMachine(o, dnsperfPath)
		return perCore(ctx, o, dnsperfPath, etcd.Client(), etcd.Endpoint(), dir)
	}
	records := sampleRecords()
	if err := loadEtcd(ctx, etcd.Client(), records); err != nil {
		return fmt.Errorf("load etcd: %w", err)
	}
	zoneFile, queryFile, soakFile := filepath.Join(dir, "db.example.com"), filepath.Join(dir, "queries.txt"), filepath.Join(dir, "soak-queries.txt")
	if err := writeZone(zoneFile, records); err != nil {
		return err
	}
	if err := writeQueries(queryFile, queries(records)); err != nil {
		return err
	}
	if err := writeQueries(soakFile, soakQueries(records)); err != nil {
		return err
	}

	// One process per variant: the same blocks, without and with globaladdr;
	// the soaked block also exports coredns's metrics.
	paths, err := selectPaths(newPaths(), o.paths)
	if err != nil {
		return err
	}
	var soaked *block
	if o.soak > 0 {
		p := findPath(paths, o.soakPath)
		if p == nil {
			return fmt.Errorf("-soak-path %q: want etcd+cache, etcd or file", o.soakPath)
		}
		soaked = p.blocks[with]
		soaked.metrics = true
	}
	for v, name := range variantNames {
		srv, err := startCoreDNS(ctx, o.coredns, dir, name, blocksOf(paths, v), etcd.Endpoint(), zoneFile)
		if err != nil {
			return err
		}
		defer srv.stop()
	}
	if err := checkViews(paths); err != nil {
		return err
	}

	printMachine(o, dnsperfPath)
	perf := dnsperf{path: dnsperfPath, queries: queryFile, clients: o.clients, rcodes: []string{"NOERROR"}}
	if soaked != nil {
		perf.queries, perf.rcodes = soakFile, []string{"NOERROR", "NXDOMAIN"}
		return soak(ctx, perf, soaked, o.soak)
	}
	if err := throughput(ctx, perf, paths, o); err != nil {
		return err
	}
	if o.subtree > 0 {
		if err := subtree(ctx, o, etcd.Client(), etcd.Endpoint(), dir); err != nil {
			return err
		}
	}
	if o.samples <= 0 {
		return nil
	}
	return propagation(ctx, etcd.Client(), paths, o.samples)
}

// printMachine prints what the figures were measured on.
func printMachine(o options, dnsperfPath string) {
	fmt.Printf("## Machine\n\n")
	fmt.Printf("- CPU: %s, %d logical CPUs (load average %s)\n", cpuModel(), runtime.NumCPU(), loadAverage())
	version, _ := exec.Command(o.coredns, "-version").Output()
	fmt.Printf("- Go: %s (bench); coredns: %s, %s\n", runtime.Version(), o.coredns, strings.TrimRight(strings.Join(strings.Fields(string(version)), " "), ","))
	fmt.Printf("- dnsperf: %s, %d clients, runs of %s\n\n", dnsperfPath, o.clients, o.duration)
}
