//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// transferZone is the zone of the transfer measurement, apart from the
// others.
const transferZone = "example.net."

// transferCorefile makes transferZone transferable without (internal) and
// with globaladdr (external), as a hidden primary would.
const transferCorefile = `%[1]s:%[2]d {
	bind 127.0.0.1
	etcdzone {
		ns ns1.example.org
	}
	transfer {
		to *
	}
	etcd %[1]s {
		endpoint %[4]s
	}
}
%[1]s:%[3]d {
	bind 127.0.0.1
	globaladdr %[5]s
	etcdzone {
		ns ns1.example.org
	}
	transfer {
		to *
	}
	etcd %[1]s {
		endpoint %[4]s
	}
}
`

// transfer measures AXFRs of an etcd zone of o.transfer hosts as
// external-dns writes them, from an internal block and an external one in
// interleaved rounds, and coredns's peak RSS before and after: the zone is
// streamed, so the peak should grow by far less than the zone's size.
func transfer(ctx context.Context, o options, cli *clientv3.Client, etcdEndpoint, dir string) error {
	fmt.Printf("## Zone transfer of a %d-host etcd zone (etcdzone)\n\n", o.transfer)
	hosts := subtreeShape{name: "transfer", apex: transferZone, addr: func(i int) string { return fmt.Sprintf("10.30.%d.%d", i>>8, i&0xff) }}
	if err := loadSubtree(ctx, cli, hosts, o.transfer); err != nil {
		return fmt.Errorf("load %s: %w", transferZone, err)
	}
	ports := [2]int{}
	for i := range ports {
		var err error
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	conf := filepath.Join(dir, "Corefile.transfer")
	body := fmt.Sprintf(transferCorefile, transferZone, ports[without], ports[with], etcdEndpoint, globalV4)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return err
	}
	srv, err := launch(o.coredns, conf, filepath.Join(dir, "coredns.transfer.log"))
	if err != nil {
		return err
	}
	defer srv.stop()
	for _, port := range ports {
		if err := soaReady(ctx, port); err != nil {
			return fmt.Errorf("%w: %s", err, srv.output())
		}
	}
	_, before, err := srv.memory()
	if err != nil {
		return err
	}

	var times [2][]float64
	var ratios []float64
	var records, size int
	for round := range o.rounds {
		var took [2]time.Duration
		for _, v := range [][2]int{{without, with}, {with, without}}[round%2] {
			start := time.Now()
			if records, size, err = axfr(ports[v]); err != nil {
				return fmt.Errorf("AXFR from the %s block: %w: %s", variantNames[v], err, srv.output())
			}
			took[v] = time.Since(start)
			times[v] = append(times[v], float64(took[v].Microseconds())/1000)
		}
		ratios = append(ratios, float64(took[with])/float64(took[without]))
	}
	_, after, err := srv.memory()
	if err != nil {
		return err
	}
	fmt.Printf("| records | wire size | ms per AXFR internal | external | ratio external/internal (median of rounds) | range | coredns peak RSS after start | after the transfers |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Printf("| %d | %.1f MiB | %.0f | %.0f | %.3f | %.3f–%.3f | %.1f MiB | %.1f MiB |\n\n", records, mib(int64(size)),
		median(times[without]), median(times[with]), median(ratios), slices.Min(ratios), slices.Max(ratios), mib(before), mib(after))
	return nil
}

// axfr transfers transferZone from the block on port, and returns how many
// records came and their size on the wire.
func axfr(port int) (records, size int, err error) {
	m := new(dns.Msg)
	m.SetAxfr(transferZone)
	tr := &dns.Transfer{ReadTimeout: time.Minute}
	envs, err := tr.In(m, fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return 0, 0, err
	}
	for env := range envs {
		if env.Error != nil {
			return 0, 0, env.Error
		}
		for _, rr := range env.RR {
			records++
			size += dns.Len(rr)
		}
	}
	return records, size, nil
}

// soaReady waits until the block on port answers the SOA query of
// transferZone, for up to 30 s: etcdzone answers it once the zone is loaded.
func soaReady(ctx context.Context, port int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err := query(port, transferZone, dns.TypeSOA); err == nil && r.Rcode == dns.RcodeSuccess {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("127.0.0.1:%d: no SOA within 30 s", port)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
