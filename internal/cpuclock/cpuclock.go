// Package cpuclock reads the CPU time the process has used, for benchmarks
// that report what a probe costs the host, beside the wall time go test
// reports.
package cpuclock

import (
	"syscall"
	"testing"
	"time"
)

// Used returns the CPU time the process has used so far, user and system;
// it fails tb when the kernel does not say.
func Used(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Report reports the CPU time per operation of b's loop, given the Used
// before it, and per hour for perHour operations an hour (60 at a probe a
// minute).
func Report(b *testing.B, before time.Duration, perHour int) {
	per := (Used(b) - before) / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds()), "cpu-µs/op")
	b.ReportMetric(float64((time.Duration(perHour)*per).Microseconds())/1000, "cpu-ms/hour")
}
