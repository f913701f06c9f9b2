package test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/routerlab"

	"github.com/miekg/dns"
)

// The dual-WAN lab's timing: every 2s, failover after 3 rounds, failback
// after 5 (dual-uplink.Corefile's defaults).
const (
	dualEvery = 2 * time.Second
	// dualFailover bounds the time from a cut to the answers without the
	// uplink: 3 failed rounds, the first of which may start a round
	// after the cut and last a round, plus 2 s for the secondary's
	// transfer and the publication.
	dualFailover = 5*dualEvery + 2*time.Second
	// dualFailbackMin is the least time from a restore to the answers
	// with the uplink again: 5 good rounds in a row, 4 rounds apart.
	dualFailbackMin = 4 * dualEvery
)

// TestDualUplink runs corefile-examples/dual-uplink.Corefile in the dual-WAN
// lab (two routers, nftables masquerade, one of them Debian's miniupnpd;
// the HTTPS echo in the WAN namespace, reached through each router by the
// source address the example binds each uplink's probes to), with a BIND
// secondary and the publish path (kube-apiserver) watching it, and beside
// it the standby form (wan2 at priority 2), whose wan1 is learned from the
// router (NAT-PMP) and checked by the echo.
//
//   - Failover: wan1's router drops what it forwards (nftables) while
//     miniupnpd goes on reporting its address; later wan2's link goes
//     down. Each time the uplink's address leaves the answers, BIND's copy
//     and the DNSEndpoints within dualFailover; the other stays.
//   - Failback: restored, an uplink is served again after its failback
//     rounds, not before.
//   - Standby: wan2's address is served only while wan1 is down.
//   - All down: the last good addresses stay, and the metric says so.
//   - Flapping: wan1 cut and restored every 2 s for 60 s moves the zone's
//     serial at most the README's bound, and BIND's transfers never fail.
func TestDualUplink(t *testing.T) {
	t.Parallel()
	if !netlab.Enter(t) {
		return
	}
	lab := routerlab.NewDual(t)
	ca := newTestCA(t)
	echo := startHTTPSEcho(t, lab.WAN, routerlab.Echo, ca)
	l := startPublishLab(t)
	putRecords(t, l.etcd, a("app."+exampleDomain, exampleInternal))
	env := withoutEtcdSecurity(map[string]string{
		"DOMAIN":            exampleDomain,
		"ETCD_ENDPOINT":     l.etcd.Endpoint(),
		"NS":                exampleNS,
		"UPLINK1_URL":       echo.url + "/wan1",
		"UPLINK2_URL":       echo.url + "/wan2",
		"UPLINK1_SOURCE":    routerlab.Host.String(),
		"UPLINK2_SOURCE":    routerlab.Host2.String(),
		"HTTPS_CA":          ca.file,
		"EVERY":             dualEvery.String(),
		"ROUTER":            routerlab.RouterLAN.String(),
		"KUBECONFIG":        l.api.kubeconfig,
		"PUBLISH_NAMESPACE": "default",
	})
	example := readExample(t, "dual-uplink.Corefile")
	checkHeader(t, "dual-uplink.Corefile", example)
	secondary := nameserver.FreeLoopbackAddr(t)
	primary := startCoreDNS(t, expandExample(t, examplePorts.Replace(dualPrimary(t, example, secondary)), env))
	standby := startCoreDNS(t, expandExample(t, examplePorts.Replace(dualStandby(t, example)), env))
	addr, standbyAddr := primary.Addr("dns"), standby.Addr("dns")
	metrics := "http://" + primary.Addr("metrics") + "/metrics"
	waitServing(t, addr)
	waitServing(t, standbyAddr)

	app := "app." + exampleDomain + "."
	wan1, wan2 := routerlab.FirstWAN.String(), routerlab.SecondWAN.String()
	bind := nameserver.StartBIND(t, secondary, nameserver.Primary{Zone: exampleDomain + ".", Addr: addr, Key: nameserver.TestKey})
	watchLeaks(t, addr, app)
	// Every copy of the view serves what is asked: the primary, BIND's
	// copy, the DNSEndpoints.
	copies := func(want ...string) map[string]func() error {
		return map[string]func() error{
			"the view":         func() error { return answersTCP(addr, app, want) },
			"BIND's copy":      func() error { return answers(bind.Addr, app, dns.TypeA, want) },
			"the DNSEndpoints": func() error { return l.publishedTargets(t, app, want) },
		}
	}
	awaitCopies(t, time.Minute, copies(wan1, wan2))
	eventually(t, time.Minute, "the standby form serves wan1 alone", func() error { return answersTCP(standbyAddr, app, []string{wan1}) })

	// wan1's router drops what it forwards; miniupnpd answers as before.
	cut := time.Now()
	lab.Drop(1)
	logDualLatencies(t, "wan1 dropped (nftables): its address out of", awaitCopies(t, dualFailover, copies(wan2)))
	eventually(t, dualFailover, "the standby form serves wan2 while wan1 is down", func() error { return answersTCP(standbyAddr, app, []string{wan2}) })
	t.Logf("the standby form serves wan2 %v after wan1's drop", time.Since(cut))
	body := scrape(t, metrics)
	if up1, up2 := metricSum(body, "coredns_globaladdr_uplink_up", `uplink="wan1"`), metricSum(body, "coredns_globaladdr_uplink_up", `uplink="wan2"`); up1 != 0 || up2 == 0 {
		t.Errorf("coredns_globaladdr_uplink_up: wan1 %v, wan2 %v (summed over the block's listeners) while wan1 is down; want 0 and above 0", up1, up2)
	}

	restored := time.Now()
	lab.Undrop(1)
	awaitFailback(t, restored, copies(wan1, wan2))
	eventually(t, time.Minute, "the standby form serves wan1 alone again", func() error { return answersTCP(standbyAddr, app, []string{wan1}) })

	// wan2's link goes down.
	lab.CutLink(2)
	logDualLatencies(t, "wan2's link down: its address out of", awaitCopies(t, dualFailover, copies(wan1)))
	restored = time.Now()
	lab.RestoreLink(2)
	awaitFailback(t, restored, copies(wan1, wan2))

	// Both down: the last good addresses stay, never NODATA.
	lab.CutLink(1)
	lab.CutLink(2)
	eventually(t, time.Minute, "coredns_globaladdr_uplinks_all_down{family=ipv4} at 1", func() error { // summed over the listeners
		if v := metricSum(scrape(t, metrics), "coredns_globaladdr_uplinks_all_down", `family="ipv4"`); v == 0 {
			return fmt.Errorf("it is %v", v)
		}
		return nil
	})
	if err := answersTCP(addr, app, []string{wan1}); err != nil && answersTCP(addr, app, []string{wan2}) != nil && answersTCP(addr, app, []string{wan1, wan2}) != nil {
		t.Errorf("both uplinks down: %v; want the last good addresses", err)
	}
	lab.RestoreLink(1)
	lab.RestoreLink(2)
	awaitCopies(t, time.Minute, copies(wan1, wan2))

	// Flapping: the serial moves at most the README's bound (8 in a
	// minute at every 2s), and BIND's transfers never fail.
	serials := watchSerials(t, addr)
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		lab.CutLink(1)
		time.Sleep(dualEvery)
		lab.RestoreLink(1)
		time.Sleep(dualEvery)
	}
	moves := serials()
	t.Logf("wan1 cut and restored every %v for a minute: the serial moved %d times", dualEvery, moves)
	if moves > 8 {
		t.Errorf("flapping moved the serial %d times, over the README's bound of 8", moves)
	}
	for _, bad := range []string{"failed while receiving", "IXFR failed", "transfer of '" + exampleDomain + "/IN' from " + addr + ": failed"} {
		if strings.Contains(bind.Output(), bad) {
			t.Errorf("BIND's log holds %q:\n%s", bad, tail(bind.Output()))
		}
	}
}

// dualPrimary is dual-uplink.Corefile as TestDualUplink runs it with its
// watchers: transfers to secondary, with TSIG, and publish.
func dualPrimary(t *testing.T, corefile, secondary string) string {
	t.Helper()
	return replaceOnce(t, replaceOnce(t, corefile,
		"    tsig\n", "    tsig {\n        secret "+nameserver.TestKey.Name+" "+nameserver.TestKey.Secret+"\n        require AXFR IXFR\n    }\n"),
		"    etcd {$DOMAIN} {\n", "    transfer {\n        to "+secondary+"\n    }\n    publish {\n        kubeconfig {$KUBECONFIG}\n        namespace {$PUBLISH_NAMESPACE}\n    }\n    etcd {$DOMAIN} {\n")
}

// dualStandby is dual-uplink.Corefile in the standby form the docs show,
// wan2 at priority 2, with wan1 learned from the router (NAT-PMP) and
// checked by its echo, through the first router.
func dualStandby(t *testing.T, corefile string) string {
	t.Helper()
	return replaceOnce(t, corefile, "        uplink wan1 from https {$UPLINK1_URL}\n",
		"        uplink wan1 from natpmp {$ROUTER}\n        uplink wan1 check https {$UPLINK1_URL}\n        uplink wan2 priority 2\n")
}

// replaceOnce replaces old, which corefile must hold once, by new.
func replaceOnce(t *testing.T, corefile, old, new string) string {
	t.Helper()
	if strings.Count(corefile, old) != 1 {
		t.Fatalf("the Corefile does not hold %q once:\n%s", old, corefile)
	}
	return strings.Replace(corefile, old, new, 1)
}

// answersTCP is answers for name's A records, over TCP, which the example's
// rrl never limits: the test asks far more often than a resolver would.
func answersTCP(addr, name string, want []string) error {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, addr)
	if err != nil {
		return err
	}
	var got []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			got = append(got, a.A.String())
		}
	}
	slices.Sort(got)
	if want = slices.Sorted(slices.Values(want)); !slices.Equal(got, want) {
		return fmt.Errorf("%s A: got %v (%s), want %v", name, got, dns.RcodeToString[r.Rcode], want)
	}
	return nil
}

// awaitCopies waits until every check of copies passes, and returns how
// long each took from the call.
func awaitCopies(t *testing.T, within time.Duration, copies map[string]func() error) map[string]time.Duration {
	t.Helper()
	start := time.Now()
	took := map[string]time.Duration{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, check := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			for time.Since(start) < within {
				if err = check(); err == nil {
					mu.Lock()
					took[name] = time.Since(start)
					mu.Unlock()
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Errorf("%s: not within %v: %v", name, within, err)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return took
}

// awaitFailback waits until copies pass after a restore at restored, and
// fails t if the view passed before dualFailbackMin (less half a round, for
// the round the restore fell in).
func awaitFailback(t *testing.T, restored time.Time, copies map[string]func() error) {
	t.Helper()
	for time.Since(restored) < dualFailbackMin-dualEvery/2 {
		if err := copies["the view"](); err == nil {
			t.Fatalf("served again %v after the restore, before the failback's %v", time.Since(restored), dualFailbackMin)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waited := time.Since(restored)
	took := awaitCopies(t, time.Minute, copies)
	logDualLatencies(t, fmt.Sprintf("failback (after %v of holding off): the restored uplink's address in", waited.Round(time.Millisecond)), addTo(took, waited))
}

// addTo returns took with d added to each time.
func addTo(took map[string]time.Duration, d time.Duration) map[string]time.Duration {
	for name := range took {
		took[name] += d
	}
	return took
}

// logDualLatencies logs how long each copy took, from the change.
func logDualLatencies(t *testing.T, what string, took map[string]time.Duration) {
	t.Helper()
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(took)) {
		parts = append(parts, fmt.Sprintf("%s %v", name, took[name].Round(time.Millisecond)))
	}
	t.Logf("%s: %s", what, strings.Join(parts, ", "))
}

// watchSerials asks addr for the zone's SOA every 100 ms until the returned
// function is called, which returns how many times the serial moved.
func watchSerials(t *testing.T, addr string) (moves func() int) {
	t.Helper()
	stop, done := make(chan struct{}), make(chan int, 1)
	go func() {
		var last uint32
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			case <-time.After(100 * time.Millisecond):
			}
			m := new(dns.Msg)
			m.SetQuestion(exampleDomain+".", dns.TypeSOA)
			r, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, addr)
			if err != nil || len(r.Answer) == 0 {
				continue
			}
			if soa, ok := r.Answer[0].(*dns.SOA); ok {
				if last != 0 && soa.Serial != last {
					n++
				}
				last = soa.Serial
			}
		}
	}()
	return func() int {
		close(stop)
		return <-done
	}
}

// publishedTargets reports whether the publication's A endpoint of name
// targets want, and nothing else.
func (l *publishLab) publishedTargets(t *testing.T, name string, want []string) error {
	for _, o := range l.objects(t) {
		for _, e := range o.Spec.Endpoints {
			if e.DNSName+"." == name && e.RecordType == "A" {
				got := slices.Sorted(slices.Values(e.Targets))
				if w := slices.Sorted(slices.Values(want)); !slices.Equal(got, w) {
					return fmt.Errorf("the DNSEndpoint of %s targets %v, want %v", name, got, w)
				}
				return nil
			}
		}
	}
	return fmt.Errorf("no DNSEndpoint holds %s A", name)
}
