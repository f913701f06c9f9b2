package hosted

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/fixedview"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/internal/zonekeys"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/signer"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// TestSignedCNAMELoopAcrossZones serves example.com and example.org, both
// signed, with a CNAME loop between them, and asks for the loop with DO
// while changes written to etcd and signature refreshes make each zone's
// builder take its zone's write lock again and again. A query with DO
// chases the loop through both zones and back into the first: had it held
// a zone's read lock during the chase, it would take it a second time, and
// block behind the waiting writer, which waits for the first read lock: a
// deadlock. Every query must get its answer, within a bound.
func TestSignedCNAMELoopAcrossZones(t *testing.T) {
	dir := zonekeys.Write(t, "example.com.", "example.org.")
	s := etcdtest.StartT(t)
	for _, r := range []externaldns.Record{
		{Name: "ping.example.com", Type: "CNAME", Targets: []string{"pong.example.org"}},
		{Name: "pong.example.org", Type: "CNAME", Targets: []string{"ping.example.com"}},
	} {
		if err := externaldns.Put(context.Background(), s.Client(), "/skydns", r); err != nil {
			t.Fatal(err)
		}
	}
	x := newTestZones(t, s, fixedview.View{State: &horizon.State{Show: func(rrs []dns.RR) []dns.RR { return rrs }}}, "example.com.", "example.org.")
	for _, z := range x.zones {
		if err := z.Sign([]string{dir}, signer.Options{KeyTTL: 3600}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	leave := x.follow()
	t.Cleanup(func() {
		// Bounded: a builder stuck on a zone's lock must fail the test,
		// not hang it.
		var left sync.WaitGroup
		left.Add(1)
		go func() { defer left.Done(); leave() }()
		if !waitGroup(&left, 30*time.Second) {
			t.Error("the zones' builders did not stop within 30 s: blocked on a zone's lock")
		}
	})
	poll.Until(t, 30*time.Second, "the zones loaded", func() error {
		for _, z := range x.zones {
			if z.Current() == nil {
				return errors.New("not loaded")
			}
		}
		return nil
	})
	if m := askDO(x, "ping.example.com.", dns.TypeA); m.Rcode != dns.RcodeServerFailure || len(m.Answer) < 4 {
		t.Fatalf("the loop with DO: want SERVFAIL with both CNAMEs and their signatures, got\n%v", m)
	}

	// Writers: a change to each zone, and a refresh of its signatures, in a
	// loop. Readers: queries with DO for the loop, from both ends.
	work, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; work.Err() == nil; i++ {
			for _, name := range []string{"churn.example.com", "churn.example.org"} {
				r := externaldns.Record{Name: name, Type: "A", Targets: []string{fmt.Sprintf("203.0.113.%d", i%250+1)}}
				if err := externaldns.Put(work, s.Client(), "/skydns", r); err != nil && work.Err() == nil {
					t.Errorf("writing %s: %v", name, err)
					return
				}
			}
			for _, z := range x.zones {
				z.signing.due.Store(true)
				z.rejudgeSoon()
			}
		}
	}()
	var asked sync.Map
	for _, name := range []string{"ping.example.com.", "pong.example.org."} {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				for ; work.Err() == nil; n++ {
					if m := askDO(x, name, dns.TypeA); m.Rcode != dns.RcodeServerFailure || len(m.Answer) < 4 {
						t.Errorf("%s with DO: want SERVFAIL with the loop, got\n%v", name, m)
						return
					}
				}
				asked.Store(name, n)
			}()
		}
	}
	if !waitGroup(&wg, time.Minute) {
		t.Fatal("queries with DO or changes still blocked a minute after they were due to end: a deadlock")
	}
	asked.Range(func(name, n any) bool { t.Logf("%s: %d queries", name, n); return true })
}

// waitGroup waits for wg at most d, and reports whether it is done.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return true
	case <-time.After(d):
		return false
	}
}
