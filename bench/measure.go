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
)

// dnsperf runs the dnsperf command with one query file.
type dnsperf struct {
	path    string
	queries string
	clients int
}

// result is what one dnsperf run reports, and the CPU time coredns spent
// per answered query meanwhile.
type result struct {
	qps       float64
	completed int64
	lost      int64
	rcodes    string
	cpu       time.Duration // per query
}

var (
	qpsLine       = regexp.MustCompile(`Queries per second:\s+([0-9.]+)`)
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

// run sends queries to the block b for length, as fast as it answers, and
// fails unless every answer is NOERROR.
func (d dnsperf) run(ctx context.Context, b *block, length time.Duration) (result, error) {
	cmd := exec.CommandContext(ctx, d.path,
		"-s", "127.0.0.1", "-p", strconv.Itoa(b.port), "-d", d.queries,
		"-l", strconv.FormatFloat(length.Seconds(), 'f', -1, 64),
		"-c", strconv.Itoa(d.clients), "-t", "2")
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
	if m := completedLine.FindSubmatch(out); m != nil {
		r.completed, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := lostLine.FindSubmatch(out); m != nil {
		r.lost, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := rcodesLine.FindSubmatch(out); m != nil {
		r.rcodes = strings.TrimSpace(string(m[1]))
	}
	if !strings.HasPrefix(r.rcodes, "NOERROR") || strings.Contains(r.rcodes, ",") {
		return r, fmt.Errorf("dnsperf against %s: answers other than NOERROR: %s", b, r.rcodes)
	}
	return r, nil
}

// soak runs dnsperf against b for length and samples coredns's RSS every
// second. After a warm-up (a tenth of the run, at most 30 s) the RSS must
// stay within 10% of its lowest sample.
func soak(ctx context.Context, perf dnsperf, b *block, length time.Duration) error {
	fmt.Printf("## Soak\n\ndnsperf against %s for %s, RSS sampled every second.\n\n", b, length)
	done := make(chan error, 1)
	var res result
	start := time.Now()
	go func() {
		var err error
		res, err = perf.run(ctx, b, length)
		done <- err
	}()
	warmUp := min(length/10, 30*time.Second)
	var samples []int64 // after the warm-up
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			return reportSoak(res, samples, warmUp)
		case <-tick.C:
			rss, _, err := b.srv.memory()
			if err != nil {
				return err
			}
			if time.Since(start) >= warmUp {
				samples = append(samples, rss)
			}
		}
	}
}

// reportSoak prints the soak's figures and fails when RSS grew by more than
// 10%.
func reportSoak(res result, samples []int64, warmUp time.Duration) error {
	if len(samples) < 2 {
		return errors.New("soak: too short to sample RSS")
	}
	lo, hi := slices.Min(samples), slices.Max(samples)
	tenth := max(len(samples)/10, 1)
	first, last := median(samples[:tenth]), median(samples[len(samples)-tenth:])
	spread := float64(hi-lo) / float64(lo)
	fmt.Printf("| queries answered | qps | samples after %s warm-up | RSS first tenth | RSS last tenth | min | max | (max-min)/min |\n|---|---|---|---|---|---|---|---|\n", warmUp)
	fmt.Printf("| %d | %.0f | %d | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB | %.1f%% |\n\n",
		res.completed, res.qps, len(samples), mib(first), mib(last), mib(lo), mib(hi), 100*spread)
	if spread > 0.10 {
		return fmt.Errorf("soak: RSS not flat: %.1f%% between %.1f and %.1f MiB", 100*spread, mib(lo), mib(hi))
	}
	fmt.Println("RSS flat within 10%.")
	return nil
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
