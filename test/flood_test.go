package test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// TestEtcdzoneGlobalAddressFlood changes the hidden primary's global
// address every 10 ms while clients ask for its hosts and transfer its
// zone: every answer holds one of the global addresses, none internal, and
// every transfer holds one zone, each host at the same address (no zone half
// rebuilt).
func TestEtcdzoneGlobalAddressFlood(t *testing.T) {
	primary, etcd, _ := startHiddenPrimary(t, "*")
	addr := primary.Addr("primary")
	const hosts = 200
	for i := range hosts {
		putRecords(t, etcd, externaldns.Record{Name: fmt.Sprintf("f%03d.example.com", i), Type: "A", Targets: []string{fmt.Sprintf("192.168.7.%d", i)}})
	}
	eventually(t, 10*time.Second, "the last host", func() error {
		return answers(addr, fmt.Sprintf("f%03d.example.com.", hosts-1), dns.TypeA, []string{"203.0.113.10"})
	})

	globals := []string{"203.0.113.10", "203.0.113.20"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		failures  []string
		asked     int
		transfers int
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 10 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := etcd.Client().Put(ctx, globalKey, globals[i%2]+" 2001:db8::10"); err != nil && ctx.Err() == nil {
				fail("writing the global address: %v", err)
			}
			<-tick.C
		}
	})
	for w := range 4 {
		wg.Go(func() {
			c := &dns.Client{Timeout: time.Second}
			for i := w; ctx.Err() == nil; i += 4 {
				m := new(dns.Msg)
				m.SetQuestion(fmt.Sprintf("f%03d.example.com.", i%hosts), dns.TypeA)
				r, _, err := c.Exchange(m, addr)
				if err != nil {
					continue // a lost datagram under load
				}
				mu.Lock()
				asked++
				mu.Unlock()
				if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
					fail("%s: %s with %d records", m.Question[0].Name, dns.RcodeToString[r.Rcode], len(r.Answer))
					continue
				}
				if a, ok := r.Answer[0].(*dns.A); !ok || (a.A.String() != globals[0] && a.A.String() != globals[1]) {
					fail("%s: %s", m.Question[0].Name, r.Answer[0])
				}
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			rrs, err := nameserver.TryAXFR(addr, "example.com.", &nameserver.TestKey)
			if err != nil {
				fail("AXFR: %v", err)
				continue
			}
			mu.Lock()
			transfers++
			mu.Unlock()
			seen := map[string]int{}
			for _, rr := range rrs {
				if err := hiddenPrimaryPolicy.CheckRR(rr); err != nil {
					fail("AXFR: %v", err)
				}
				if a, ok := rr.(*dns.A); ok && strings.HasPrefix(a.Hdr.Name, "f") {
					seen[a.A.String()]++
				}
			}
			if len(seen) != 1 {
				fail("AXFR: the hosts' addresses %v, want one address for all %d", seen, hosts)
			}
			for _, n := range seen {
				if n != hosts {
					fail("AXFR: %d hosts, want %d", n, hosts)
				}
			}
		}
	})
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if asked == 0 || transfers == 0 {
		t.Errorf("%d queries and %d transfers answered", asked, transfers)
	}
	t.Logf("%d queries and %d transfers answered while the address changed", asked, transfers)
}
