package test

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// logsCorefile is a hidden primary on Debian's etcd (ETCD, with TLS and
// CREDENTIALS) that notifies two secondaries that are not there (SECONDARIES).
const logsCorefile = `example.com:{port:dns} {
	etcdzone {
		ns ns1.example.com
		endpoint ETCD
		tls TLS
		credentials CREDENTIALS
	}
	etcd example.com
	transfer {
		to SECONDARIES
	}
}
`

// TestLogsOfAStart starts, reloads and stops a primary on Debian's etcd
// (3.4), whose zone holds one record and whose secondaries do not answer:
// each log line is one line with its level, and says what an operator needs
// to know in words. The etcd release's progress bug (etcd-io/etcd#15220),
// which the plugin works around, is not news; nor are the etcd client's
// retries of the requests cancelled at the reload and the shutdown.
func TestLogsOfAStart(t *testing.T) {
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	lab.AddUser(t, "reader", "reader-secret", etcdlab.Perm{Prefix: "/skydns/"})
	if _, err := lab.Admin.Put(context.Background(), "/skydns/com/example/app", `{"host":"192.168.0.51"}`); err != nil {
		t.Fatal(err)
	}
	corefile := strings.NewReplacer(
		"ETCD", lab.Member.ClientURL,
		"TLS", lab.Client.CertFile+" "+lab.Client.KeyFile+" "+lab.CA.CertFile,
		"CREDENTIALS", "reader reader-secret",
		"SECONDARIES", closedUDPAddr(t)+" "+closedUDPAddr(t),
	).Replace(logsCorefile)
	logs := captureLog(t)
	c := startCoreDNS(t, corefile)
	waitLog(t, logs, "zone example.com. (block dns://example.com.:"+strconv.Itoa(c.Port("dns"))+") loaded: 1 record, serial")
	waitLog(t, logs, "was not accepted by")
	c.Reload(t, corefile)
	waitLog(t, logs, "[INFO] Reloading complete")
	c.Stop()

	for line := range strings.Lines(logs.String()) {
		switch {
		case !leveled.MatchString(line):
			t.Errorf("a line without its level: %q", line)
		case strings.Contains(line, "15220"):
			t.Errorf("etcd's progress bug logged: %q", line)
		case strings.Contains(line, "retrying of unary invoker"):
			t.Errorf("the etcd client's retry logged: %q", line)
		case strings.Contains(line, "was not accepted by") && (!strings.Contains(line, "[WARNING]") || strings.Count(line, "was not accepted by") != 2):
			t.Errorf("the NOTIFY warning is not one line naming both secondaries: %q", line)
		}
	}
}

// leveled is a line of CoreDNS's log: a time and a level.
var leveled = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(INFO|WARNING|ERROR|DEBUG)\] `)

// closedUDPAddr returns a local UDP address where nothing listens: a NOTIFY
// sent there is refused at once.
func closedUDPAddr(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	c.Close()
	return "127.0.0.1:" + strconv.Itoa(port)
}
