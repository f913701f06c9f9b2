//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The CPUs of the per-core comparison: every server on one, dnsperf on the
// other.
const (
	serverCPU = "0"
	clientCPU = "1"
)

// perCoreZone is the zone of the per-core comparison.
const perCoreZone = "example.com."

// pinned is one server of the per-core comparison, pinned to serverCPU.
type pinned struct {
	name string
	port int
	srv  *coreDNS
	// global says that its answers show the external view.
	global bool
	// do says that dnsperf queries it with the DO bit set.
	do bool
}

func (p *pinned) String() string    { return fmt.Sprintf("%s (127.0.0.1:%d)", p.name, p.port) }
func (p *pinned) dnsPort() int      { return p.port }
func (p *pinned) process() *coreDNS { return p.srv }

// perCore compares, on one CPU each, the shipped external.Corefile (rrl
// removed) with the same binary answering with whoami alone (CoreDNS's
// floor), with the example's chain cut down plugin by plugin, with the same
// chain on the file plugin, and with BIND 9 and Knot serving the external
// view's zone. Every server runs pinned to serverCPU (coredns with
// GOMAXPROCS=1, named -n 1, Knot with one UDP worker) and dnsperf pinned to
// clientCPU. The zone holds o.perCore hosts; one query in ten asks for a
// name that does not exist. The servers are measured in turn, the order
// rotated each round; the ratios are taken within each round. With
// o.signed the servers are instead those of startSigned: the signed zone,
// each queried with DO and without.
func perCore(ctx context.Context, o options, dnsperfPath string, cli *clientv3.Client, etcdEndpoint, dir string) error {
	hosts := subtreeShape{name: "per core", apex: perCoreZone, addr: func(i int) string { return fmt.Sprintf("10.2.%d.%d", i>>8, i&0xff) }}
	if err := loadSubtree(ctx, cli, hosts, o.perCore); err != nil {
		return fmt.Errorf("load %s: %w", perCoreZone, err)
	}
	internalZone, externalZone, queryFile := filepath.Join(dir, "db.internal"), filepath.Join(dir, "db.external"), filepath.Join(dir, "percore-queries.txt")
	if err := writeHosts(internalZone, hosts, o.perCore); err != nil {
		return err
	}
	global := hosts
	global.addr = func(int) string { return globalV4 }
	if err := writeHosts(externalZone, global, o.perCore); err != nil {
		return err
	}
	var qs []string
	for i := range o.perCore {
		qs = append(qs, fmt.Sprintf("h%05d.%s A", i, perCoreZone))
	}
	for i := range o.perCore / 9 { // a tenth of all queries
		qs = append(qs, fmt.Sprintf("nx%05d.%s A", i, perCoreZone))
	}
	if err := writeQueries(queryFile, qs); err != nil {
		return err
	}
	var servers []*pinned
	defer func() {
		for _, s := range servers {
			s.srv.stop()
		}
	}()
	env := map[string]string{"DOMAIN": strings.TrimSuffix(perCoreZone, "."), "GLOBAL_ADDR": globalV4, "NS": "ns1.example.org",
		"ETCD_ENDPOINT": etcdEndpoint, "ZONE_FILE": internalZone}
	start, ratios := startPerCore, perCoreRatios
	if o.signed {
		start, ratios = startSigned, signedRatios
	}
	profiled, err := start(ctx, o, dir, env, externalZone, &servers)
	if err != nil {
		return err
	}
	for _, s := range servers {
		want := globalV4
		if !s.global {
			continue
		}
		r, err := query(s.port, "h00001."+perCoreZone, dns.TypeA)
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		if got := addresses(r); got != want {
			return fmt.Errorf("%s: h00001 A is %q, want %q", s, got, want)
		}
		if s.do {
			if err := signedAnswer(s.port, "h00001."+perCoreZone); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
	}

	perf := dnsperf{path: dnsperfPath, queries: queryFile, clients: o.clients, rcodes: []string{"NOERROR", "NXDOMAIN"}, cpus: clientCPU}
	for _, s := range servers {
		if _, err := perf.with(s).run(ctx, s, time.Second); err != nil {
			return err
		}
	}
	fmt.Printf("## Per core: %d hosts, a tenth of the queries for missing names\n\n", o.perCore)
	fmt.Printf("Every server pinned to CPU %s (coredns GOMAXPROCS=1, named -n 1, Knot udp-workers 1), dnsperf (%d clients) to CPU %s; %d rounds of %s, the order rotated each round (load average %s).\n\n",
		serverCPU, o.clients, clientCPU, o.rounds, o.duration, loadAverage())
	qps := map[*pinned][]float64{}
	cpu := map[*pinned][]float64{}
	// ratios and capacities hold each ratio's rounds: of queries per
	// second, and of the CPU time per query inverted (the queries a whole
	// CPU would answer), steadier on a machine others share.
	perRound, capacities := map[string][]float64{}, map[string][]float64{}
	fmt.Printf("| round | server | qps | CPU µs/query | lost |\n|---|---|---|---|---|\n")
	for round := range o.rounds {
		got, cost := map[string]float64{}, map[string]float64{}
		for i := range servers {
			s := servers[(i+round)%len(servers)]
			r, err := perf.with(s).measure(ctx, s, o.duration)
			if err != nil {
				return err
			}
			fmt.Printf("| %d | %s | %.0f | %.1f | %d |\n", round+1, s.name, r.qps, µs(r.cpu), r.lost)
			qps[s] = append(qps[s], r.qps)
			cpu[s] = append(cpu[s], µs(r.cpu))
			got[s.name], cost[s.name] = r.qps, µs(r.cpu)
		}
		for _, c := range ratios {
			if got[c.over] > 0 {
				perRound[c.name()] = append(perRound[c.name()], got[c.of]/got[c.over])
			}
			if cost[c.of] > 0 {
				capacities[c.name()] = append(capacities[c.name()], cost[c.over]/cost[c.of])
			}
		}
	}
	if o.rounds > 0 {
		perCoreSummary(servers, ratios, qps, cpu, perRound, capacities)
	}
	for _, s := range profiled {
		if err := profile(ctx, perf, s, o); err != nil {
			return err
		}
	}
	return nil
}

// startPerCore starts the servers of the per-core comparison of issue 28
// into servers: the variants of external.Corefile, then BIND 9 and Knot
// serving externalZone. It returns those of them to profile.
func startPerCore(ctx context.Context, o options, dir string, env map[string]string, externalZone string, servers *[]*pinned) ([]*pinned, error) {
	example, err := os.ReadFile(filepath.Join(o.examples, "external.Corefile"))
	if err != nil {
		return nil, err
	}
	variants, err := perCoreVariants(string(example))
	if err != nil {
		return nil, err
	}
	var profiled []*pinned
	for _, v := range variants {
		s, err := startPinnedCoreDNS(ctx, o, dir, v.name, v.corefile, env)
		if err != nil {
			return nil, err
		}
		s.global = v.global
		*servers = append(*servers, s)
		if o.profiles(v.name) {
			profiled = append(profiled, s)
		}
	}
	for _, start := range []func(context.Context, string, string) (*pinned, error){startPinnedBIND, startPinnedKnot} {
		s, err := start(ctx, dir, externalZone)
		if err != nil {
			return nil, err
		}
		s.global = true
		*servers = append(*servers, s)
	}
	return profiled, nil
}

// perCoreSummary prints each server's median queries per second and CPU
// time per query, and the medians and ranges of the ratios of the rounds.
func perCoreSummary(servers []*pinned, compared []ratio, qps, cpu map[*pinned][]float64, ratios, capacities map[string][]float64) {
	fmt.Printf("\n| server | median qps | median CPU µs/query |\n|---|---|---|\n")
	for _, s := range servers {
		fmt.Printf("| %s | %.0f | %.1f |\n", s.name, median(qps[s]), median(cpu[s]))
	}
	fmt.Printf("\nRatios, taken within each round (median, range), of queries per second and of CPU time per query (inverted):\n\n| ratio | qps: median | range | goal | CPU: median | range |\n|---|---|---|---|---|---|\n")
	for _, c := range compared {
		rs := ratios[c.name()]
		if len(rs) == 0 {
			continue
		}
		goal := ""
		if c.goal > 0 {
			goal = fmt.Sprintf("≥ %.2f: met", c.goal)
			if median(rs) < c.goal {
				goal = fmt.Sprintf("≥ %.2f: MISSED", c.goal)
			}
		}
		cs := capacities[c.name()]
		fmt.Printf("| %s | %.3f | %.3f–%.3f | %s | %.3f | %.3f–%.3f |\n", c.name(), median(rs), slices.Min(rs), slices.Max(rs), goal, median(cs), slices.Min(cs), slices.Max(cs))
	}
	fmt.Println()
}

// ratio is one server's queries per second over another's, and the goal
// it has, if any.
type ratio struct {
	of, over string
	goal     float64
}

func (r ratio) name() string { return r.of + " / " + r.over }

// perCoreRatios are the ratios the per-core comparison reports.
var perCoreRatios = []ratio{
	{"external", "whoami", 0.8},
	{"external", "BIND 9", 0},
	{"external", "Knot", 0},
	{"external", "file", 1.3},
	{"external, no prometheus", "whoami", 0},
	{"external, no errors", "whoami", 0},
	{"external, no cookie", "whoami", 0},
	{"external, no loadbalance", "whoami", 0},
	{"external, no bufsize", "whoami", 0},
	{"external, no tsig", "whoami", 0},
	{"etcdzone + globaladdr", "whoami", 0.9},
	{"etcdzone", "whoami", 0},
	{"file", "whoami", 0},
	{"BIND 9", "whoami", 0},
	{"Knot", "whoami", 0},
}

// perCoreVariant is a coredns configuration of the per-core comparison.
type perCoreVariant struct {
	name, corefile string
	global         bool // it serves the external view
}

// perCoreVariants derives the compared Corefiles from the shipped
// external.Corefile: the example without rrl, then without one of the
// directives on its query path (tsig with tsigtime), and the same chain on
// the file plugin.
func perCoreVariants(example string) ([]perCoreVariant, error) {
	head, dirs, err := splitBlock(example)
	if err != nil {
		return nil, fmt.Errorf("external.Corefile: %w", err)
	}
	keep := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return slices.Contains(drop, directiveName(d)) })
	}
	only := func(names ...string) []string {
		return slices.DeleteFunc(slices.Clone(dirs), func(d string) bool { return !slices.Contains(names, directiveName(d)) })
	}
	block := func(ds []string) string { return head + strings.Join(ds, "") + "}\n" }
	onFile := append(keep("rrl", "etcdzone", "etcd"), "    file {$ZONE_FILE}\n")
	return []perCoreVariant{
		{"whoami", "{$DOMAIN}:{$DNS_PORT} {\n    whoami\n}\n", false},
		{"external", block(keep("rrl")), true},
		{"external, no prometheus", block(keep("rrl", "prometheus")), true},
		{"external, no errors", block(keep("rrl", "errors")), true},
		{"external, no cookie", block(keep("rrl", "cookie")), true},
		{"external, no loadbalance", block(keep("rrl", "loadbalance")), true},
		{"external, no bufsize", block(keep("rrl", "bufsize")), true},
		{"external, no tsig", block(keep("rrl", "tsig", "tsigtime")), true},
		{"file", block(onFile), true},
		{"etcdzone + globaladdr", block(only("globaladdr", "etcdzone", "etcd")), true},
		{"etcdzone", block(only("etcdzone", "etcd")), false},
	}, nil
}

// splitBlock splits a Corefile of one server block into the text up to and
// including the block's opening line and the block's directives, each with
// its lines (and those of its own block).
func splitBlock(corefile string) (head string, directives []string, err error) {
	var (
		b     strings.Builder
		depth int
		cur   strings.Builder
	)
	for line := range strings.Lines(corefile) {
		t := strings.TrimSpace(line)
		switch {
		case depth == 0:
			b.WriteString(line)
			if strings.HasSuffix(t, "{") {
				depth = 1
			}
			continue
		case depth == 1 && t == "}":
			if cur.Len() > 0 {
				return "", nil, errors.New("unbalanced braces")
			}
			return b.String(), directives, nil
		}
		cur.WriteString(line)
		depth += strings.Count(t, "{") - strings.Count(t, "}")
		if depth == 1 {
			directives = append(directives, cur.String())
			cur.Reset()
		}
	}
	return "", nil, errors.New("no server block")
}

// withDirective returns corefile with directive added at the top of its
// first server block.
func withDirective(corefile, directive string) string {
	var b strings.Builder
	added := false
	for line := range strings.Lines(corefile) {
		b.WriteString(line)
		t := strings.TrimSpace(line)
		if !added && !strings.HasPrefix(t, "#") && strings.HasSuffix(t, "{") {
			b.WriteString("    " + directive + "\n")
			added = true
		}
	}
	return b.String()
}

// directiveName returns the name of the directive d.
func directiveName(d string) string {
	if f := strings.Fields(d); len(f) > 0 {
		return f[0]
	}
	return ""
}

// startPinnedCoreDNS starts o.coredns with corefile, its placeholders taken
// from env and fresh ports, pinned to serverCPU with GOMAXPROCS=1, and waits
// until it answers.
func startPinnedCoreDNS(ctx context.Context, o options, dir, name, corefile string, env map[string]string) (*pinned, error) {
	file := fileName(name)
	conf := filepath.Join(dir, "Corefile.percore."+file)
	if o.profiles(name) {
		corefile = withDirective(corefile, "pprof 127.0.0.1:{$PPROF_PORT}")
	}
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("taskset", "-c", serverCPU, o.coredns, "-conf", conf)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	s := &pinned{name: name}
	for _, placeholder := range []string{"DNS_PORT", "HEALTH_PORT", "READY_PORT", "METRICS_PORT", "PPROF_PORT"} {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		if placeholder == "DNS_PORT" {
			s.port = port
		}
		cmd.Env = append(cmd.Env, placeholder+"="+strconv.Itoa(port))
	}
	return s.launch(ctx, cmd, filepath.Join(dir, "coredns.percore."+file+".log"))
}

// launch starts cmd as s's process and waits until it answers.
func (s *pinned) launch(ctx context.Context, cmd *exec.Cmd, logFile string) (*pinned, error) {
	srv, err := start(cmd, logFile)
	if err != nil {
		return nil, err
	}
	s.srv = srv
	if err := srv.waitSOA(ctx, s.port, perCoreZone, time.Minute); err != nil {
		srv.stop()
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return s, nil
}

// startPinnedBIND starts BIND 9's named with one worker, pinned to
// serverCPU, as the primary of zoneFile.
func startPinnedBIND(ctx context.Context, dir, zoneFile string) (*pinned, error) {
	named, confDir, port, err := nameServerPlace(dir, "named", "bind9")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(confDir, "named.conf")
	text := fmt.Sprintf(`options {
	directory %q;
	pid-file %q;
	session-keyfile none;
	listen-on port %d { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion no;
	notify no;
	dnssec-validation no;
};
controls { };
zone %q {
	type primary;
	file %q;
};
`, confDir, filepath.Join(confDir, "named.pid"), port, perCoreZone, zoneFile)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	s := &pinned{name: "BIND 9", port: port}
	return s.launch(ctx, exec.Command("taskset", "-c", serverCPU, named, "-g", "-n", "1", "-c", conf), filepath.Join(dir, "named.log"))
}

// startPinnedKnot starts Knot DNS with one UDP worker, pinned to serverCPU,
// as the primary of zoneFile.
func startPinnedKnot(ctx context.Context, dir, zoneFile string) (*pinned, error) {
	knotd, confDir, port, err := nameServerPlace(dir, "knotd", "knot")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(confDir, "knot.conf")
	text := fmt.Sprintf(`server:
    rundir: %[1]q
    listen: 127.0.0.1@%[2]d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: %[1]q
zone:
  - domain: %[3]s
    file: %[4]q
`, confDir, port, perCoreZone, zoneFile)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	s := &pinned{name: "Knot", port: port}
	return s.launch(ctx, exec.Command("taskset", "-c", serverCPU, knotd, "-c", conf), filepath.Join(dir, "knot.log"))
}

// nameServerPlace finds program (of the Debian package pkg), makes it a
// directory under dir and picks a free port for it.
func nameServerPlace(dir, program, pkg string) (binary, confDir string, port int, err error) {
	if binary, err = exec.LookPath(program); err != nil {
		return "", "", 0, fmt.Errorf("%s not found: apt-get install -y %s", program, pkg)
	}
	if port, err = freePort(); err != nil {
		return "", "", 0, err
	}
	confDir = filepath.Join(dir, program)
	return binary, confDir, port, os.MkdirAll(confDir, 0o755)
}

// fileName returns the name of a server of the per-core comparison as it
// goes into file names and -profile-of: "external, no prometheus" is
// external-no-prometheus.
func fileName(server string) string {
	return strings.Join(strings.Fields(strings.NewReplacer(",", "", "+", "").Replace(server)), "-")
}

// profiles reports whether the server named server is to be profiled.
func (o options) profiles(server string) bool {
	return o.profile != "" && slices.Contains(strings.Split(o.profileOf, ","), fileName(server))
}

// profile writes a CPU profile of s, taken through its pprof plugin while
// dnsperf queries it for o.duration, to the directory o.profile as
// NAME.pprof (go tool pprof -top BINARY FILE reads it).
func profile(ctx context.Context, perf dnsperf, s *pinned, o options) error {
	port := ""
	for _, kv := range s.srv.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "PPROF_PORT="); ok {
			port = v
		}
	}
	seconds := max(int(o.duration.Seconds()), 1)
	done := make(chan error, 1)
	go func() {
		_, err := perf.run(ctx, s, time.Duration(seconds+1)*time.Second)
		done <- err
	}()
	file := filepath.Join(o.profile, fileName(s.name)+".pprof")
	err := saveProfile(fmt.Sprintf("http://127.0.0.1:%s/debug/pprof/profile?seconds=%d", port, seconds), file)
	if err = errors.Join(err, <-done); err == nil {
		fmt.Printf("CPU profile of %s under dnsperf: %s (go tool pprof -top %s %s)\n\n", s, file, o.coredns, file)
	}
	return err
}

// saveProfile writes the profile that the pprof plugin serves at url into
// file.
func saveProfile(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	return errors.Join(err, f.Close())
}
