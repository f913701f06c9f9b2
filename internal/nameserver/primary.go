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
	conf.WriteString(bindOptions(dir, host, port, ""))
	i := 0
	for name, text := range zones {
		file := fmt.Sprintf("zone%d.db", i)
		i++
		writeFile(t, filepath.Join(dir, file), text)
		fmt.Fprintf(&conf, "zone %q {\n\ttype primary;\n\tfile %q;\n};\n", name, file)
	}
	return startNamed(t, named, dir, addr, conf.String())
}

// StartDynamicPrimary starts BIND 9's named on addr as the primary of zone,
// started from text in zone-file format, as RFC 2136 UPDATEs signed with
// key change it: key may change any name of the zone, and transfer it, as
// may any client on loopback. It answers only from zone. It stops when t
// ends.
func StartDynamicPrimary(t testing.TB, addr, zone, text string, key Key) *Server {
	t.Helper()
	named := prereq.Program(t, "named", "bind9")
	dir := t.TempDir()
	host, port, _ := net.SplitHostPort(addr)
	writeFile(t, filepath.Join(dir, "zone.db"), text)
	conf := bindOptions(dir, host, port, "") + fmt.Sprintf(`%[1]s
zone %[2]q {
	type primary;
	file "zone.db";
	update-policy { grant %[3]q zonesub ANY; };
	allow-transfer { key %[3]q; 127.0.0.0/8; };
};
`, bindKey(key), zone, key.Name)
	return startNamed(t, named, dir, addr, conf)
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
