package nameserver

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// StartUnbound starts Debian's Unbound on addr as a validating resolver
// that asks stubAddr (host:port) for zone and trusts anchors (DS or DNSKEY
// records in zone-file format) as a lab's trust anchors. It asks nothing
// else, so it serves a lab with no root. It keeps answers for a second at
// most, so that each question soon reaches the lab's servers again, and
// takes no signature past its expiry (no clock skew allowed). It stops
// when t ends.
func StartUnbound(t testing.TB, addr, zone, stubAddr string, anchors ...string) *Server {
	t.Helper()
	unbound := prereq.Program(t, "unbound", "unbound")
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(addr)
	shost, sport, _ := net.SplitHostPort(stubAddr)
	var ta strings.Builder
	for _, a := range anchors {
		fmt.Fprintf(&ta, "\ttrust-anchor: \"%s\"\n", strings.Join(strings.Fields(a), " "))
	}
	conf := fmt.Sprintf(`server:
	interface: %[2]s
	port: %[3]s
	do-ip6: no
	username: ""
	chroot: ""
	directory: %[1]q
	pidfile: "%[1]s/unbound.pid"
	use-syslog: no
	logfile: ""
	verbosity: 1
	val-log-level: 2
	do-not-query-localhost: no
	module-config: "validator iterator"
	cache-max-ttl: 1
	val-sig-skew-min: 0
	val-sig-skew-max: 0
	cache-max-negative-ttl: 1
%[7]sstub-zone:
	name: %[4]q
	stub-addr: %[5]s@%[6]s
remote-control:
	control-enable: no
`, dir, host, port, zone, shost, sport, ta.String())
	writeFile(t, filepath.Join(dir, "unbound.conf"), conf)
	s := &Server{Name: "Unbound", Addr: addr}
	s.out = run(t, unbound, "-d", "-c", filepath.Join(dir, "unbound.conf"))
	waitAnswering(t, s)
	return s
}
