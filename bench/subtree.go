//go:build linux

package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
)

// subtreeZone is the zone of the large subtrees, apart from the sample zone.
const subtreeZone = "example.org."

// subtreeShape is a subtree of hosts whose apex query makes the etcd plugin
// answer every host's record at once (SkyDNS semantics).
type subtreeShape struct {
	name string
	apex string             // the name asked, the subtree's root
	addr func(i int) string // the i-th host's address
}

// subtreeShapes are the two large answers that used to cost the external
// view time quadratic in their size.
var subtreeShapes = []subtreeShape{
	// Every record distinct after map's prefix translation.
	{"distinct after map", "map." + subtreeZone, func(i int) string { return fmt.Sprintf("10.20.%d.%d", i>>8, i&0xff) }},
	// Public records, and one internal record among them.
	{"public, one internal", "mixed." + subtreeZone, func(i int) string {
		if i == 0 {
			return "192.168.0.51"
		}
		return fmt.Sprintf("198.18.%d.%d", i>>8, i&0xff)
	}},
}

// subtreeCorefile serves the subtrees without (internal) and with globaladdr
// (external); the map makes the first shape's records distinct.
const subtreeCorefile = `%[1]s:%[2]d {
	bind 127.0.0.1
	etcd %[1]s {
		endpoint %[4]s
	}
}
%[1]s:%[3]d {
	bind 127.0.0.1
	globaladdr %[5]s {
		ttl %[6]d
		map 10.20.0.0/16 198.51.0.0/16
	}
	etcd %[1]s {
		endpoint %[4]s
	}
}
`

// subtree measures the time per apex query over TCP of a subtree of hosts
// hosts, in each of subtreeShapes, for the internal block and the external
// one, in interleaved rounds of sequential queries, and prints the
// external/internal ratio (median of the rounds).
func subtree(ctx context.Context, o options, cli *clientv3.Client, etcdEndpoint, dir string) error {
	fmt.Printf("## Large answers: the apex of a %d-host etcd subtree over TCP\n\n", o.subtree)
	for _, s := range subtreeShapes {
		if err := loadSubtree(ctx, cli, s, o.subtree); err != nil {
			return fmt.Errorf("load %s: %w", s.apex, err)
		}
	}
	ports := [2]int{}
	for i := range ports {
		var err error
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	conf := filepath.Join(dir, "Corefile.subtree")
	body := fmt.Sprintf(subtreeCorefile, strings.TrimSuffix(subtreeZone, "."), ports[without], ports[with], etcdEndpoint, globalV4, globalTTL)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return err
	}
	srv, err := launch(o.coredns, conf, filepath.Join(dir, "coredns.subtree.log"))
	if err != nil {
		return err
	}
	defer srv.stop()

	fmt.Printf("| shape | records answered internal / external | ms per query internal | external | ratio external/internal (median of rounds) | range |\n|---|---|---|---|---|---|\n")
	for _, s := range subtreeShapes {
		for _, port := range ports {
			if err := waitAnswers(ctx, port, s.apex); err != nil {
				return fmt.Errorf("%s: %w: %s", s.name, err, srv.output())
			}
		}
		sizes := [2]int{}
		var ratios []float64
		var times [2][]float64
		for round := range o.rounds {
			var perQuery [2]time.Duration
			for _, v := range [][2]int{{without, with}, {with, without}}[round%2] {
				if perQuery[v], sizes[v], err = timeQueries(ports[v], s.apex, 20); err != nil {
					return fmt.Errorf("%s: %s: %w", s.name, variantNames[v], err)
				}
				times[v] = append(times[v], float64(perQuery[v].Microseconds())/1000)
			}
			ratios = append(ratios, float64(perQuery[with])/float64(perQuery[without]))
		}
		fmt.Printf("| %s | %d / %d | %.2f | %.2f | %.3f | %.3f–%.3f |\n", s.name, sizes[without], sizes[with],
			median(times[without]), median(times[with]), median(ratios), slices.Min(ratios), slices.Max(ratios))
	}
	fmt.Println()
	return nil
}

// loadSubtree writes n hosts below s.apex as external-dns does, eight
// writers at a time.
func loadSubtree(ctx context.Context, cli *clientv3.Client, s subtreeShape, n int) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			r := externaldns.Record{Name: fmt.Sprintf("h%05d.%s", i, strings.TrimSuffix(s.apex, ".")), Type: "A", Targets: []string{s.addr(i)}, TTL: recordTTL}
			return externaldns.Put(ctx, cli, "", r)
		})
	}
	return g.Wait()
}

// waitAnswers waits until the block on port answers for apex, for up to
// 30 s.
func waitAnswers(ctx context.Context, port int, apex string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, err := timeQueries(port, apex, 1)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no answer for %s on port %d: %v", apex, port, cmp.Or(ctx.Err(), err))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// timeQueries asks the block on port for apex's A records n times in a row,
// on one TCP connection of its own, and returns the mean time per query and
// the number of records in the last answer.
func timeQueries(port int, apex string, n int) (time.Duration, int, error) {
	c, err := dns.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	var size int
	start := time.Now()
	for range n {
		r, err := ask(c, apex)
		if err != nil {
			return 0, 0, err
		}
		size = len(r.Answer)
	}
	return time.Since(start) / time.Duration(n), size, nil
}

// ask sends one A query for name on c and reads the reply.
func ask(c *dns.Conn, name string) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if err := c.WriteMsg(m); err != nil {
		return nil, err
	}
	r, err := c.ReadMsg()
	if err == nil && r.Rcode != dns.RcodeSuccess {
		err = fmt.Errorf("rcode %s", dns.RcodeToString[r.Rcode])
	}
	return r, err
}
