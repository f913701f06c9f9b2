//go:build linux

package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// comparison gathers the rounds of one way of comparing the blocks.
type comparison struct {
	title string
	// qps holds each block's queries per second, round by round.
	qps map[*block][]float64
	// ratios and cpuRatios hold each path's with/without ratios of queries
	// per second and of coredns's CPU time per query, round by round.
	ratios, cpuRatios map[*path][]float64
}

func newComparison(title string) *comparison {
	return &comparison{title: title, qps: map[*block][]float64{}, ratios: map[*path][]float64{}, cpuRatios: map[*path][]float64{}}
}

// add records one round of p and prints it. A round in which queries were
// lost measured a stall (dnsperf waited for its timeout), not the blocks:
// it is printed but left out.
func (c *comparison) add(round int, p *path, rs [2]result) {
	ratio := rs[with].qps / rs[without].qps
	note := ""
	if rs[without].lost > 0 || rs[with].lost > 0 {
		note = " (left out)"
	} else {
		for v, r := range rs {
			c.qps[p.blocks[v]] = append(c.qps[p.blocks[v]], r.qps)
		}
		c.ratios[p] = append(c.ratios[p], ratio)
		c.cpuRatios[p] = append(c.cpuRatios[p], float64(rs[with].cpu)/float64(rs[without].cpu))
	}
	fmt.Printf("| %d | %s | %.0f | %.0f | %.3f | %.1f | %.1f | %d/%d%s |\n", round, p.name, rs[without].qps, rs[with].qps, ratio,
		µs(rs[without].cpu), µs(rs[with].cpu), rs[without].lost, rs[with].lost, note)
}

// summarize prints, per path, the median queries per second of each block,
// the median and range of the rounds' with/without ratios, and the median
// ratio of CPU time per query.
func (c *comparison) summarize(paths []*path) {
	fmt.Printf("\n%s, per path:\n\n", c.title)
	fmt.Printf("| path | median qps without | median qps with | median ratio | ratio range | target ≥ 0.98 | CPU per query with/without (median) |\n|---|---|---|---|---|---|---|\n")
	for _, p := range paths {
		rs := c.ratios[p]
		if len(rs) == 0 {
			fmt.Printf("| %s | every round lost queries | | | | | |\n", p.name)
			continue
		}
		verdict := "met"
		if median(rs) < 0.98 {
			verdict = "MISSED"
		}
		fmt.Printf("| %s | %.0f | %.0f | %.3f | %.3f–%.3f | %s | %.3f |\n", p.name,
			median(c.qps[p.blocks[without]]), median(c.qps[p.blocks[with]]), median(rs), slices.Min(rs), slices.Max(rs), verdict, median(c.cpuRatios[p]))
	}
	fmt.Println()
	c.backends(paths)
}

// backends prints the external view's queries per second (the "with"
// blocks, without cache) on etcdzone over those on the etcd plugin and on
// the file plugin serving the same zone, when the paths include them: the
// median of each block's rounds.
func (c *comparison) backends(paths []*path) {
	qps := func(name string) float64 {
		if p := findPath(paths, name); p != nil && len(c.qps[p.blocks[with]]) > 0 {
			return median(c.qps[p.blocks[with]])
		}
		return 0
	}
	zone := qps("etcdzone")
	if zone == 0 {
		return
	}
	fmt.Printf("%s, the external view (with globaladdr, no cache) on etcdzone:\n\n| over | median qps | etcdzone's qps over it | target |\n|---|---|---|---|\n", c.title)
	for _, other := range []struct {
		name   string
		target float64
	}{{"etcd", 0}, {"file", 0.95}} {
		q := qps(other.name)
		if q == 0 {
			continue
		}
		verdict := ""
		if other.target > 0 {
			verdict = fmt.Sprintf("≥ %.2f: met", other.target)
			if zone/q < other.target {
				verdict = fmt.Sprintf("≥ %.2f: MISSED", other.target)
			}
		}
		fmt.Printf("| %s | %.0f | %.3f | %s |\n", other.name, q, zone/q, verdict)
	}
	fmt.Println()
}

const roundHeader = "| round | path | qps without | qps with | ratio | CPU µs/query without | with | lost without/with |\n|---|---|---|---|---|---|---|---|\n"

// throughput warms every block up, then compares each path's two blocks
// twice:
//
//   - interleaved: one block at a time, the one without globaladdr first in
//     odd rounds and second in even ones (A B, B A, ...), so that a drift of
//     the machine's load favours neither;
//   - simultaneous: both blocks at once, each in its own coredns process
//     with its own dnsperf, so that whatever else the machine runs weighs on
//     both alike; each process gets a like share of the CPUs, and its
//     queries per second show its cost per query.
//
// Last it prints the peak RSS of both processes.
func throughput(ctx context.Context, perf dnsperf, paths []*path, o options) error {
	for _, p := range paths {
		for _, b := range p.blocks {
			if _, err := perf.run(ctx, b, time.Second); err != nil {
				return err
			}
		}
	}
	fmt.Printf("## Throughput\n\n%d rounds of %s per path and way; ratio = with/without.\n\n", o.rounds, o.duration)

	inter := newComparison("Interleaved")
	fmt.Printf("### Interleaved\n\n" + roundHeader)
	for round := 1; round <= o.rounds; round++ {
		for _, p := range paths {
			var rs [2]result
			for i := range p.blocks {
				v := (i + round + 1) % 2 // without first in odd rounds
				r, err := perf.measure(ctx, p.blocks[v], o.duration)
				if err != nil {
					return err
				}
				rs[v] = r
			}
			inter.add(round, p, rs)
		}
	}
	inter.summarize(paths)

	simul := newComparison("Simultaneous")
	fmt.Printf("### Simultaneous\n\n" + roundHeader)
	for round := 1; round <= o.rounds; round++ {
		for _, p := range paths {
			rs, err := perf.measureBoth(ctx, p, o.duration)
			if err != nil {
				return err
			}
			simul.add(round, p, rs)
		}
	}
	simul.summarize(paths)

	for v, name := range variantNames {
		_, peak, err := paths[0].blocks[v].srv.memory()
		if err != nil {
			return err
		}
		fmt.Printf("- coredns %s globaladdr (%d blocks): peak RSS (VmHWM) %.1f MiB\n", name, len(paths), mib(peak))
	}
	fmt.Println()
	return nil
}

// measure runs dnsperf against b for length and adds the CPU time b's
// process spent per answered query to the result.
func (d dnsperf) measure(ctx context.Context, b target, length time.Duration) (result, error) {
	before, err := b.process().cpuTime()
	if err != nil {
		return result{}, err
	}
	r, err := d.run(ctx, b, length)
	if err != nil {
		return r, err
	}
	after, err := b.process().cpuTime()
	if err != nil || r.completed == 0 {
		return r, err
	}
	r.cpu = (after - before) / time.Duration(r.completed)
	return r, nil
}

// measureBoth measures p's two blocks at the same time.
func (d dnsperf) measureBoth(ctx context.Context, p *path, length time.Duration) ([2]result, error) {
	var (
		rs   [2]result
		errs [2]error
		wg   sync.WaitGroup
	)
	for v, b := range p.blocks {
		wg.Go(func() { rs[v], errs[v] = d.measure(ctx, b, length) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return rs, err
		}
	}
	return rs, nil
}
