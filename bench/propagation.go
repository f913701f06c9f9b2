//go:build linux

package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// propagation measures, on each etcd path's external block (the etcd
// plugin, etcdzone), the time from the start of external-dns's write of a
// new host into etcd to the block's first answer with the host's rewritten
// address, polling every millisecond for at most 10 s. Each sample is a new
// name, never asked for before, as for a new Ingress.
func propagation(ctx context.Context, cli *clientv3.Client, paths []*path, samples int) error {
	fmt.Printf("## Propagation\n\nNew host written into etcd as external-dns does (A 10.9.0.1 and its ownership record) → first answer %s from the external block; %d samples per path.\n\n", globalV4, samples)
	fmt.Printf("| path | write (median) | write → answer: p50 | p90 | p99 | max |\n|---|---|---|---|---|---|\n")
	for _, p := range paths {
		if p.backend == "file" {
			continue
		}
		var writes, total []time.Duration
		for i := range samples {
			name := fmt.Sprintf("new-%d-%d.example.com", time.Now().UnixNano(), i)
			w, t, err := propagate(ctx, cli, p.blocks[with], name)
			if err != nil {
				return err
			}
			writes, total = append(writes, w), append(total, t)
			if err := externaldns.Delete(ctx, cli, "", name); err != nil {
				return err
			}
		}
		slices.Sort(total)
		at := func(q float64) time.Duration { return total[min(len(total)-1, int(q*float64(len(total))))] }
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", p.name, ms(median(writes)), ms(median(total)), ms(at(0.9)), ms(at(0.99)), ms(total[len(total)-1]))
	}
	fmt.Println()
	return nil
}

// propagate writes name and polls b until it answers with the global
// address. It returns how long the write took and how long until the answer.
func propagate(ctx context.Context, cli *clientv3.Client, b *block, name string) (write, total time.Duration, err error) {
	start := time.Now()
	r := externaldns.Record{Name: name, Type: "A", Targets: []string{"10.9.0.1"}, Resource: "ingress/default/new"}
	if err := externaldns.Put(ctx, cli, "", r); err != nil {
		return 0, 0, err
	}
	write = time.Since(start)
	deadline := start.Add(10 * time.Second)
	for {
		if m, err := query(b.port, name, dns.TypeA); err == nil && addresses(m) == globalV4 {
			return write, time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%s: %s not answered within 10 s of its write", b, name)
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
