package nameserver

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
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
	return StartUnboundStubs(t, addr, map[string]string{zone: stubAddr}, anchors...)
}

// StartUnboundStubs is StartUnbound for a lab of several zones: it asks
// stubs[zone] (host:port) for each zone, "." among them for a lab root.
func StartUnboundStubs(t testing.TB, addr string, stubs map[string]string, anchors ...string) *Server {
	t.Helper()
	unbound := prereq.Program(t, "unbound", "unbound")
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(addr)
	var stubZones strings.Builder
	for _, zone := range slices.Sorted(maps.Keys(stubs)) {
		shost, sport, _ := net.SplitHostPort(stubs[zone])
		fmt.Fprintf(&stubZones, "stub-zone:\n\tname: %q\n\tstub-addr: %s@%s\n", zone, shost, sport)
	}
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
%[5]s%[4]sremote-control:
	control-enable: no
`, dir, host, port, stubZones.String(), ta.String())
	writeFile(t, filepath.Join(dir, "unbound.conf"), conf)
	s := &Server{Name: "Unbound", Addr: addr}
	s.out = run(t, unbound, "-d", "-c", filepath.Join(dir, "unbound.conf"))
	waitAnswering(t, s)
	return s
}
