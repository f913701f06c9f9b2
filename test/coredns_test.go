package test

import (
	"testing"

	"github.com/globaladdr/globaladdr/internal/corednstest"
)

// coreDNS is a CoreDNS instance running inside the test process, started by
// startCoreDNS.
type coreDNS = corednstest.Server

// startCoreDNS starts CoreDNS in the test process from corefile, whose
// listeners' ports are placeholders such as {port:internal} (see
// corednstest.Start), and stops it when the test ends. The test fails at
// once if CoreDNS does not start.
//
// Example:
//
//	c := startCoreDNS(t, `example.com:{port:internal} {
//		etcd { endpoint `+etcd.Endpoint()+` }
//	}`)
//	reply := exchange(t, "udp", c.Addr("internal"), query)
func startCoreDNS(t testing.TB, corefile string) *coreDNS {
	t.Helper()
	return corednstest.Start(t, corefile)
}

// tryStartCoreDNS is startCoreDNS for a Corefile that CoreDNS may reject: it
// returns the start-up error (a plugin's setup error, say) instead of
// failing the test.
func tryStartCoreDNS(t testing.TB, corefile string) (*coreDNS, error) {
	t.Helper()
	return corednstest.TryStart(t, corefile)
}
