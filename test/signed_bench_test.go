package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// BenchmarkSignedChange measures the time from an etcd write to its signed
// answer at the NSD secondary of a signing hidden primary (NOTIFY, IXFR):
// p50 and p99 over the iterations.
func BenchmarkSignedChange(b *testing.B) {
	_, keyFile := writeKey(b, "example.com.")
	etcd, nsd := startSignedNSD(b, keyFile, "")
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("bench%d.example.com", i)
		start := time.Now()
		putRecords(b, etcd, a(name, "192.168.0.61"))
		poll.Until(b, 30*time.Second, "the signed change at NSD", func() error { return signedAnswer(nsd.Addr, name+".", dns.TypeA, "203.0.113.10") })
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Milliseconds()), "p99-ms")
}

// BenchmarkSignedQPS runs dnsperf for 10 s against a signing primary, with
// DO and without, on a mix of an answer, a CNAME, NXDOMAIN, NODATA and a
// wildcard: the ratio is QPS with DO over QPS without. With -cpu 1 the
// server (in the test's process) has one core.
func BenchmarkSignedQPS(b *testing.B) {
	dnsperf := prereq.Program(b, "dnsperf", "dnsperf")
	_, keyFile := writeKey(b, "example.com.")
	primary, _ := startSignedPrimary(b, keyFile, "", nameserver.FreeLoopbackAddr(b))
	queries := filepath.Join(b.TempDir(), "queries")
	if err := os.WriteFile(queries, []byte("app.example.com A\nalias.example.com A\nnothing.example.com A\napp.example.com MX\nx.apps.example.com A\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	host, port, _ := strings.Cut(primary.Addr("primary"), ":")
	qps := func(do bool) float64 {
		args := []string{"-s", host, "-p", port, "-d", queries, "-l", "10", "-c", "4"}
		if do {
			args = append(args, "-D")
		}
		out, err := exec.Command(dnsperf, args...).CombinedOutput()
		if err != nil {
			b.Fatalf("dnsperf: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`Queries per second:\s+([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			b.Fatalf("dnsperf:\n%s", out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	b.ResetTimer()
	for range b.N {
		plain, signed := qps(false), qps(true)
		b.ReportMetric(plain, "qps-plain")
		b.ReportMetric(signed, "qps-do")
		b.ReportMetric(signed/plain, "do/plain")
	}
}
