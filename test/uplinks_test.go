package test

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// uplinkHosts is the size of the zone of two uplinks: at two addresses a
// host, its transfer needs some twenty messages.
const uplinkHosts = 30000

// uplinkHost is the name of host i of the zone of two uplinks.
func uplinkHost(i int) string { return fmt.Sprintf("h%05d.example.com.", i) }

// putUplinkHosts writes the hosts of the zone of two uplinks into etcd, each
// with an internal address, in the SkyDNS values external-dns writes, a
// hundred in one transaction.
func putUplinkHosts(t *testing.T, etcd *etcdtest.Server) {
	t.Helper()
	var ops []clientv3.Op
	for i := range uplinkHosts {
		key := externaldns.Key("/skydns", strings.TrimSuffix(uplinkHost(i), ".")) + "/1a2b3c4d"
		ops = append(ops, clientv3.OpPut(key, fmt.Sprintf(`{"host":"10.30.%d.%d","targetstrip":1}`, i>>8, i&0xff)))
		if len(ops) == 100 || i == uplinkHosts-1 {
			if _, err := etcd.Client().Txn(context.Background()).Then(ops...).Commit(); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
}

// incremental tells, in each secondary's log, an incremental transfer that
// it received.
var incremental = map[string]*regexp.Regexp{
	"BIND": regexp.MustCompile(`(?i)example\.com/IN.*(got incremental response|IXFR)`),
	"NSD":  regexp.MustCompile(`(?i)example\.com.*IXFR|IXFR.*example\.com`),
	"Knot": regexp.MustCompile(`\[example\.com\.\] IXFR, incoming`),
}

// TestHiddenPrimaryTwoUplinks has BIND 9, NSD and Knot transfer a zone of
// 30,000 hosts from a hidden primary with two global addresses of one
// family: each answers every host with both. Then one host is added: each
// secondary applies it by an incremental transfer (RFC 1995), as its log
// says, and answers it.
func TestHiddenPrimaryTwoUplinks(t *testing.T) {
	if testing.Short() {
		t.Skip("30,000 hosts")
	}
	bindAddr, nsdAddr, knotAddr := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	primary, etcd, _ := startHiddenPrimary(t, bindAddr, nsdAddr, knotAddr)
	putUplinkHosts(t, etcd)
	putGlobal(t, etcd, "203.0.113.10 203.0.113.11 2001:db8::10")
	both := []string{"203.0.113.10", "203.0.113.11"}
	eventually(t, time.Minute, "the primary's last host", func() error {
		return answers(primary.Addr("primary"), uplinkHost(uplinkHosts-1), dns.TypeA, both)
	})

	ref := nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey}
	secondaries := []*nameserver.Server{nameserver.StartBIND(t, bindAddr, ref), nameserver.StartNSD(t, nsdAddr, ref), nameserver.StartKnot(t, knotAddr, ref)}
	serial := query(t, "udp", primary.Addr("primary"), "example.com.", dns.TypeSOA).Answer[0].(*dns.SOA)
	for _, s := range secondaries {
		eventually(t, 2*time.Minute, s.Name+"'s transfer", func() error {
			return answers(s.Addr, "example.com.", dns.TypeSOA, []string{soaData(serial)})
		})
		if err := everyHost(s.Addr, both); err != nil {
			t.Errorf("%s: %v\n%s", s.Name, err, tail(s.Output()))
		}
	}

	putRecords(t, etcd, a("added.example.com", "192.168.0.70"))
	for _, s := range secondaries {
		eventually(t, 10*time.Second, s.Name+": the added host", func() error {
			return answers(s.Addr, "added.example.com.", dns.TypeA, both)
		})
		if !incremental[s.Name].MatchString(s.Output()) {
			t.Errorf("%s: no incremental transfer in its log:\n%s", s.Name, tail(s.Output()))
		}
	}
}

// soaData returns the data of soa, as answers compares it.
func soaData(soa *dns.SOA) string { return strings.TrimPrefix(soa.String(), soa.Hdr.String()) }

// everyHost asks addr for every host of the zone of two uplinks, a few
// queries at a time, and returns the first answer that is not want.
func everyHost(addr string, want []string) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				var err error
				for range 3 { // a lost datagram is asked again
					if err = answers(addr, uplinkHost(i), dns.TypeA, want); err == nil {
						break
					}
				}
				if err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range uplinkHosts {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// tail returns the last lines of a program's output, for a failure's
// message.
func tail(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
