package test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
	"golang.org/x/sync/errgroup"
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
	values := map[string]string{}
	for i := range uplinkHosts {
		key := externaldns.Key("/skydns", strings.TrimSuffix(uplinkHost(i), ".")) + "/1a2b3c4d"
		values[key] = fmt.Sprintf(`{"host":"10.30.%d.%d","targetstrip":1}`, i>>8, i&0xff)
	}
	putKeysInTxns(t, etcd, values)
}

// incremental reports whether a secondary's log shows that its last
// transfer was incremental: Knot names it (IXFR); BIND and NSD give its
// size, a few records for one change where the zone has 60,000.
func incremental(name, log string) bool {
	last := func(re string) int {
		m := regexp.MustCompile(re).FindAllStringSubmatch(log, -1)
		if len(m) == 0 {
			return -1
		}
		n, _ := strconv.Atoi(m[len(m)-1][1])
		return n
	}
	switch name {
	case "BIND":
		n := last(`Transfer completed: \d+ messages, (\d+) records`)
		return n >= 0 && n < 100
	case "NSD":
		n := last(`received update to serial \d+ .* of (\d+) bytes`)
		return n >= 0 && n < 10000
	}
	return regexp.MustCompile(`\[example\.com\.\] IXFR, incoming`).MatchString(log)
}

// TestHiddenPrimaryTwoUplinks has BIND 9, NSD and Knot transfer a zone of
// 30,000 hosts from a hidden primary with two global addresses of one
// family: each answers every host with both. Then one host is added: each
// secondary applies it by an incremental transfer (RFC 1995), as its log
// says, and answers it.
func TestHiddenPrimaryTwoUplinks(t *testing.T) {
	t.Parallel()
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
	for _, s := range secondaries {
		eventually(t, 2*time.Minute, s.Name+"'s transfer", func() error {
			soa := query(t, "udp", primary.Addr("primary"), "example.com.", dns.TypeSOA).Answer[0].(*dns.SOA)
			return answers(s.Addr, "example.com.", dns.TypeSOA, []string{soaData(soa)})
		})
		if err := everyHost(s.Addr, both); err != nil {
			t.Errorf("%s: %v\n%s", s.Name, err, tail(s.Output()))
		}
	}

	start := time.Now()
	rrs := nameserver.AXFR(t, primary.Addr("primary"), "example.com.", &nameserver.TestKey)
	t.Logf("AXFR of %d records with two global addresses: %v", len(rrs), time.Since(start))

	before := query(t, "udp", primary.Addr("primary"), "example.com.", dns.TypeSOA).Answer[0].(*dns.SOA)
	written := time.Now()
	putRecords(t, etcd, a("added.example.com", "192.168.0.70"))
	for _, s := range secondaries {
		eventually(t, 10*time.Second, s.Name+": the added host", func() error {
			return answers(s.Addr, "added.example.com.", dns.TypeA, both)
		})
		t.Logf("%s answers the added host %v after the write", s.Name, time.Since(written))
		// A secondary may answer before it logs the transfer's end.
		eventually(t, 10*time.Second, s.Name+": an incremental transfer in its log", func() error {
			if !incremental(s.Name, s.Output()) {
				return fmt.Errorf("none:\n%s", tail(s.Output()))
			}
			return nil
		})
	}
	if r := ixfr(t, primary.Addr("primary"), before); len(r.Answer) > 20 {
		t.Errorf("IXFR for one added host: %d records", len(r.Answer))
	} else {
		t.Logf("IXFR for one added host (and its ownership record): %d records, %d bytes", len(r.Answer), r.Len())
	}
}

// soaData returns the data of soa, as answers compares it.
func soaData(soa *dns.SOA) string { return strings.TrimPrefix(soa.String(), soa.Hdr.String()) }

// everyHost asks addr for every host of the zone of two uplinks, eight
// queries at a time, and returns the error of an answer that is not want.
func everyHost(addr string, want []string) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range uplinkHosts {
		g.Go(func() error {
			var err error
			for range 3 { // a lost datagram is asked again
				if err = answers(addr, uplinkHost(i), dns.TypeA, want); err == nil {
					break
				}
			}
			return err
		})
	}
	return g.Wait()
}

// tail returns the last lines of a program's output, for a failure's
// message.
func tail(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}
