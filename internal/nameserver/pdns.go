package nameserver

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// pdnsSchemas are the places Debian's pdns-backend-sqlite3 puts the schema
// of a new database in; the first that exists is used (an image may drop
// /usr/share/doc).
var pdnsSchemas = []string{
	"/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql",
	"/usr/share/doc/pdns-backend-sqlite3/schema.sqlite3.sql",
}

// PowerDNS is the PowerDNS Authoritative Server of Debian's pdns-server,
// with its zones in an SQLite database of its own (pdns-backend-sqlite3),
// changed through its HTTP API as external-dns's pdns provider changes
// them.
type PowerDNS struct {
	*Server
	API    string // the API's base URL, http://host:port
	APIKey string // the X-API-Key it requires
}

// StartPowerDNS starts pdns_server on addr (from FreeLoopbackAddr) in the
// foreground, with no zone, and its API on another free loopback port; it
// returns once both answer. It sends nothing off the machine (no security
// poll). It stops when t ends, and its output is logged if t failed.
func StartPowerDNS(t testing.TB, addr string) *PowerDNS {
	t.Helper()
	pdns := prereq.Program(t, "pdns_server", "pdns-server")
	sqlite := prereq.Program(t, "sqlite3", "sqlite3")
	schema := pdnsSchema(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "pdns.sqlite3")
	sql, err := os.Open(schema)
	if err != nil {
		t.Fatal(err)
	}
	defer sql.Close()
	create := exec.Command(sqlite, "-bail", db)
	create.Stdin = sql
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("creating PowerDNS's database from %s: %v\n%s", schema, err, out)
	}
	api := FreeLoopbackAddr(t)
	ahost, aport, _ := net.SplitHostPort(api)
	p := &PowerDNS{Server: &Server{Name: "PowerDNS", Addr: addr}, API: "http://" + api, APIKey: rand.Text()}
	writeFile(t, filepath.Join(dir, "pdns.conf"), fmt.Sprintf(`launch=gsqlite3
gsqlite3-database=%[2]s
local-address=%[3]s
socket-dir=%[1]s
guardian=no
daemon=no
disable-syslog=yes
log-timestamp=no
security-poll-suffix=
api=yes
api-key=%[4]s
webserver=yes
webserver-address=%[5]s
webserver-port=%[6]s
webserver-allow-from=127.0.0.0/8
`, dir, db, addr, p.APIKey, ahost, aport))
	p.out = run(t, pdns, "--config-dir="+dir)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("PowerDNS's output:\n%s", p.Output())
		}
	})
	poll.Until(t, 15*time.Second, "PowerDNS's API at "+p.API, func() error {
		return p.call(http.MethodGet, serverPath, nil, nil)
	})
	waitAnswering(t, p.Server)
	return p
}

// pdnsSchema returns the path of the schema of Debian's
// pdns-backend-sqlite3.
func pdnsSchema(t testing.TB) string {
	t.Helper()
	for _, path := range pdnsSchemas {
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	prereq.Missing(t, "PowerDNS's SQLite schema is not installed (Debian package pdns-backend-sqlite3)")
	return ""
}
