package test

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// acmeSamples is how many challenges TestACMEChallengeLatency writes and
// times: a few as a test, a few hundred for BENCHMARKS.md.
var acmeSamples = flag.Int("acme.samples", 3, "challenges TestACMEChallengeLatency writes and times")

// TestACMEChallengeLatency writes ACME challenges by signed UPDATEs to
// acme.Corefile's LAN view and times each one from the UPDATE's sending to
// the first answer holding it: from the external view, and from a BIND
// secondary of it (a hidden primary's, which learns of the change by
// NOTIFY). Each must be answered within 10 s; it logs the median and p99.
// Before each UPDATE the zone has been unchanged for over a second, as
// between an ACME client's challenges, because etcdzone sends at most one
// NOTIFY a second.
func TestACMEChallengeLatency(t *testing.T) {
	t.Parallel()
	if *acmeSamples < 1 {
		t.Fatalf("-acme.samples %d: at least 1", *acmeSamples)
	}
	lab := startACMELab(t, true)
	views := []struct{ name, addr string }{{"external view", lab.external}, {"BIND secondary", lab.secondary}}
	const name = "_acme-challenge.latency.example.com."
	times := make([][]time.Duration, len(views))
	for i := range *acmeSamples {
		time.Sleep(1100 * time.Millisecond) // quiet: this UPDATE's NOTIFY is not held back by the last change's
		value := fmt.Sprintf("sample-%d", i)
		sent := time.Now()
		if rcode := sendUpdate(t, "tcp", lab.lan, challengeUpdate(nil, name+" "+value), &nameserver.TestKey); rcode != dns.RcodeSuccess {
			t.Fatalf("UPDATE: %s", dns.RcodeToString[rcode])
		}
		errs := make([]error, len(views))
		var wg sync.WaitGroup
		for v, view := range views {
			wg.Go(func() {
				var d time.Duration
				d, errs[v] = firstAnswer(view.addr, name, value, sent)
				times[v] = append(times[v], d)
			})
		}
		wg.Wait()
		for v, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", views[v].name, err)
			}
		}
		if rcode := sendUpdate(t, "tcp", lab.lan, challengeUpdate([]string{name}), &nameserver.TestKey); rcode != dns.RcodeSuccess {
			t.Fatalf("UPDATE: %s", dns.RcodeToString[rcode])
		}
		for _, view := range views {
			eventually(t, 10*time.Second, view.name+": the challenge deleted", func() error {
				return answers(view.addr, name, dns.TypeTXT, nil)
			})
		}
	}
	for v, view := range views {
		slices.Sort(times[v])
		t.Logf("%s: %d challenges answered after p50 %s, p99 %s (from %s to %s)", view.name, len(times[v]),
			percentile(times[v], 50), percentile(times[v], 99), times[v][0], times[v][len(times[v])-1])
	}
}

// firstAnswer asks addr over TCP (which rrl never limits) for name's TXT
// records every millisecond until they hold value, and returns the time
// from sent to that answer; an error after 10 s.
func firstAnswer(addr, name, value string, sent time.Time) (time.Duration, error) {
	c := &dns.Client{Net: "tcp", Timeout: time.Second}
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeTXT)
	for {
		if r, _, err := c.Exchange(m, addr); err == nil {
			for _, rr := range r.Answer {
				if txt, ok := rr.(*dns.TXT); ok && strings.Join(txt.Txt, "") == value {
					return time.Since(sent), nil
				}
			}
		}
		if time.Since(sent) > 10*time.Second {
			return 0, fmt.Errorf("%s TXT %q not answered within 10 s", name, value)
		}
		time.Sleep(time.Millisecond) // polling: the answer's time is what is measured
	}
}

// percentile returns the p-th percentile of sorted by the nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[max(0, int(math.Ceil(p/100*float64(len(sorted))))-1)]
}
