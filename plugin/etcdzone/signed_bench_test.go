package etcdzone

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/pkg/dnstest"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/test"

	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/internal/zonekeys"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/config"

	"github.com/miekg/dns"
)

// startupHosts is the size of BenchmarkSignedStartup's zone.
const startupHosts = 30000

// BenchmarkSignedStartup starts etcdzone on an etcd of 30,000 hosts, the
// zone unsigned and signed: the time from the start to the first answer
// (with DO when signed), and the Go heap the running zone holds (after a
// GC, over that before it started).
func BenchmarkSignedStartup(b *testing.B) {
	clog.Discard()
	dir := zonekeys.Write(b, "example.com.")
	s := startTestEtcd(b)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < startupHosts; i += 16 {
				r := externaldns.Record{Name: fmt.Sprintf("h%d.example.com", i), Type: "A", Targets: []string{"192.168.0.51"}}
				if err := externaldns.Put(context.Background(), s.Client(), "/skydns", r); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, signed := range []bool{false, true} {
		b.Run(map[bool]string{false: "unsigned", true: "signed"}[signed], func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				x := newTestPlugin(b, s)
				zones := setZones(b, x)
				if signed {
					x.corefile.DNSSEC = config.DNSSEC{Keys: []string{dir}, Where: b.Name()}
					if err := x.newSigners(zones); err != nil {
						b.Fatal(err)
					}
				}
				leave := x.follow(zones)
				poll.Until(b, 5*time.Minute, "the first answer", func() error {
					if m := askDO(x, "h1.example.com.", dns.TypeA); m.Rcode != dns.RcodeSuccess || len(m.Answer) != map[bool]int{false: 1, true: 2}[signed] {
						return errors.New("no answer yet")
					}
					return nil
				})
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "first-answer-ms")
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
				leave()
			}
		})
	}
}

// askDO asks x for name's records of qtype with DO set.
func askDO(x *EtcdZone, name string, qtype uint16) *dns.Msg {
	r := new(dns.Msg)
	r.SetQuestion(name, qtype)
	r.SetEdns0(4096, true)
	rec := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := x.ServeDNS(context.Background(), rec, r); err != nil {
		return new(dns.Msg).SetRcode(r, dns.RcodeRefused)
	}
	return rec.Msg
}
