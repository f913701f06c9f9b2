//go:build linux

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// dnsperf runs the dnsperf command with one query file.
type dnsperf struct {
	path    string
	queries string
	clients int
	rcodes  []string // the response codes a run accepts
	cpus    string   // when set, the CPUs dnsperf is pinned to (taskset -c)
	do      bool     // set the DO bit (EDNS0, dnsperf -D)
}

// target is a server dnsperf queries: its port on loopback and its process.
type target interface {
	fmt.Stringer
	dnsPort() int
	process() *coreDNS
}

// result is what one dnsperf run reports, and the CPU time coredns spent
// per answered query meanwhile.
type result struct {
	qps       float64
	sent      int64
	completed int64
	lost      int64
	rcodes    string
	cpu       time.Duration // per query
}

var (
	qpsLine       = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
	sentLine      = regexp.MustCompile(`Queries sent:\s+([0-9]+)`)
	completedLine = regexp.MustCompile(`Queries completed:\s+([0-9]+)`)
	lostLine      = regexp.MustCompile(`Queries lost:\s+([0-9]+)`)
	rcodesLine    = regexp.MustCompile(`Response codes:\s+(.*)`)
)

// lookDNSPerf finds the dnsperf command.
func lookDNSPerf() (string, error) {
	p, err := exec.LookPath("dnsperf")
	if err != nil {
		return "", errors.New("dnsperf not found: apt-get install -y dnsperf")
	}
	return p, nil
}

// run sends queries to b for length, as fast as it answers, and fails
// unless every answer has one of d's response codes.
func (d dnsperf) run(ctx context.Context, b target, length time.Duration) (result, error) {
	args := []string{"-s", "127.0.0.1", "-p", strconv.Itoa(b.dnsPort()), "-d", d.queries,
		"-l", strconv.FormatFloat(length.Seconds(), 'f', -1, 64),
		"-c", strconv.Itoa(d.clients), "-t", "2"}
	if d.do {
		args = append(args, "-D")
	}
	cmd := exec.CommandContext(ctx, d.path, args...)
	if d.cpus != "" {
		cmd = exec.CommandContext(ctx, "taskset", append([]string{"-c", d.cpus, d.path}, args...)...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("dnsperf against %s: %w\n%s", b, err, out)
	}
	var r result
	m := qpsLine.FindSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("dnsperf against %s: no queries per second in\n%s", b, out)
	}
	r.qps, _ = strconv.ParseFloat(string(m[1]), 64)
	if m := sentLine.FindSubmatch(out); m != nil {
		r.sent, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := completedLine.FindSubmatch(out); m != nil {
		r.completed, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := lostLine.FindSubmatch(out); m != nil {
		r.lost, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := rcodesLine.FindSubmatch(out); m != nil {
		r.rcodes = strings.TrimSpace(string(m[1]))
	}
	if r.rcodes == "" || !d.accepts(r.rcodes) {
		return r, fmt.Errorf("dnsperf against %s: answers other than %s: %s", b, strings.Join(d.rcodes, " or "), r.rcodes)
	}
	return r, nil
}

// accepts reports whether every response code in rcodes, dnsperf's
// "NOERROR 90 (90.00%), NXDOMAIN 10 (10.00%)", is one of d's.
func (d dnsperf) accepts(rcodes string) bool {
	for c := range strings.SplitSeq(rcodes, ",") {
		if f := strings.Fields(c); len(f) == 0 || !slices.Contains(d.rcodes, f[0]) {
			return false
		}
	}
	return true
}

// soak runs dnsperf against b for length and samples coredns's RSS and
// goroutines every second. It fails when a query was lost; after a warm-up
// (a tenth of the run, at most 30 s) the RSS must stay within 10% of its
// lowest sample, and the goroutines must not grow.
func soak(ctx context.Context, perf dnsperf, b *block, length time.Duration) error {
	fmt.Printf("## Soak\n\ndnsperf with mixed names and types against %s for %s, RSS and goroutines sampled every second.\n\n", b, length)
	done := make(chan error, 1)
	var res result
	start := time.Now()
	go func() {
		var err error
		res, err = perf.run(ctx, b, length)
		done <- err
	}()
	warmUp := min(length/10, 30*time.Second)
	var rss, goroutines []int64 // after the warm-up
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			return reportSoak(res, rss, goroutines, warmUp)
		case <-tick.C:
			if time.Since(start) < warmUp {
				continue
			}
			r, _, err := b.srv.memory()
			if err != nil {
				return err
			}
			g, err := b.goroutines()
			if err != nil {
				return err
			}
			rss, goroutines = append(rss, r), append(goroutines, g)
		}
	}
}

// goroutineSlack is how many more goroutines the floor of the last tenth of
// a soak may count than the first's: those serving queries in flight.
const goroutineSlack = 10

// reportSoak prints the soak's figures and fails when a query was lost, when
// the RSS grew by more than 10% or when the fewest goroutines of the last
// tenth of the samples exceed the first tenth's by more than goroutineSlack.
// The fewest, not the median: each query in flight holds a goroutine, so the
// count swings with dnsperf's, while a leak raises the floor.
func reportSoak(res result, rss, goroutines []int64, warmUp time.Duration) error {
	if len(rss) < 2 {
		return errors.New("soak: too short to sample RSS")
	}
	fmt.Printf("| queries sent | completed | lost | qps | response codes |\n|---|---|---|---|---|\n")
	fmt.Printf("| %d | %d | %d | %.0f | %s |\n\n", res.sent, res.completed, res.lost, res.qps, res.rcodes)
	lo, hi := slices.Min(rss), slices.Max(rss)
	first, last := tenths(rss)
	spread := float64(hi-lo) / float64(lo)
	fmt.Printf("| samples after %s warm-up | RSS first tenth | RSS last tenth | min | max | (max-min)/min |\n|---|---|---|---|---|---|\n", warmUp)
	fmt.Printf("| %d | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB | %.1f%% |\n\n", len(rss), mib(median(first)), mib(median(last)), mib(lo), mib(hi), 100*spread)
	gFirst, gLast := tenths(goroutines)
	fmt.Printf("| goroutines first tenth: fewest, median | last tenth: fewest, median | min | max |\n|---|---|---|---|\n")
	fmt.Printf("| %d, %d | %d, %d | %d | %d |\n\n", slices.Min(gFirst), median(gFirst), slices.Min(gLast), median(gLast), slices.Min(goroutines), slices.Max(goroutines))

	var errs []error
	if res.lost > 0 {
		errs = append(errs, fmt.Errorf("soak: %d queries lost", res.lost))
	}
	if spread > 0.10 {
		errs = append(errs, fmt.Errorf("soak: RSS not flat: %.1f%% between %.1f and %.1f MiB", 100*spread, mib(lo), mib(hi)))
	}
	if slices.Min(gLast) > slices.Min(gFirst)+goroutineSlack {
		errs = append(errs, fmt.Errorf("soak: goroutines grew from at least %d to at least %d", slices.Min(gFirst), slices.Min(gLast)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Println("No query lost, RSS flat within 10%, no goroutine growth.")
	return nil
}

// parallel calls f on each of items, eight at a time, and returns the first
// error.
func parallel[T any](items []T, f func(T) error) error {
	var g errgroup.Group
	g.SetLimit(8)
	for _, item := range items {
		g.Go(func() error { return f(item) })
	}
	return g.Wait()
}

// tenths returns the first and the last tenth of xs, at least one each.
func tenths[T any](xs []T) (first, last []T) {
	n := max(len(xs)/10, 1)
	return xs[:n], xs[len(xs)-n:]
}

// median returns the middle value of xs (the upper one of an even count).
func median[T cmp.Ordered](xs []T) T {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func µs(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// cpuModel returns the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(b)) {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown"
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
