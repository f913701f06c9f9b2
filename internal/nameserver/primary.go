package nameserver

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// StartPrimary starts BIND 9's named on addr as the primary of zones, each
// zone's name mapped to its text in zone-file format; it answers only from
// them (no recursion). It stops when t ends.
func StartPrimary(t testing.TB, addr string, zones map[string]string) *Server {
	t.Helper()
	named := prereq.Program(t, "named", "bind9")
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(addr)
	var conf strings.Builder
	fmt.Fprintf(&conf, `options {
	directory %q;
	pid-file %q;
	session-keyfile none;
	listen-on port %s { %s; };
	listen-on-v6 { none; };
	recursion no;
	notify no;
	dnssec-validation no;
};
controls { };
`, dir, filepath.Join(dir, "named.pid"), port, host)
	i := 0
	for name, text := range zones {
		file := fmt.Sprintf("zone%d.db", i)
		i++
		writeFile(t, filepath.Join(dir, file), text)
		fmt.Fprintf(&conf, "zone %q {\n\ttype primary;\n\tfile %q;\n};\n", name, file)
	}
	writeFile(t, filepath.Join(dir, "named.conf"), conf.String())
	s := &Server{Name: "BIND", Addr: addr}
	s.out = run(t, named, "-g", "-n", "1", "-c", filepath.Join(dir, "named.conf"))
	waitAnswering(t, s)
	return s
}

// StartNSDPrimary starts NSD on addr as the primary of zone, from text in
// zone-file format (a signed zone is served as it is: NSD cannot sign). It
// stops when t ends.
func StartNSDPrimary(t testing.TB, addr, zone, text string) *Server {
	t.Helper()
	nsd := prereq.Program(t, "nsd", "nsd")
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(addr)
	writeFile(t, filepath.Join(dir, "zone.db"), text)
	return startNSD(t, nsd, dir, addr, nsdServer(dir, host, port, "")+fmt.Sprintf("zone:\n\tname: %q\n\tzonefile: \"zone.db\"\n", zone))
}
