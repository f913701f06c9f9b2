package test

import (
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/internal/testpki"

	"github.com/miekg/dns"
)

// failClosedWithin bounds how long a failure may take to be told: a read's
// deadline (5 s) and the probe of the endpoints that names the cause (2 s).
const failClosedWithin = 10 * time.Second

// failingCorefile is one view on the lab's etcd at ETCD, with TLS and
// CREDENTIALS.
const failingCorefile = `example.com:{port:dns} {
	ready :{httpport:ready}
	etcdzone {
		endpoint ETCD
		tls TLS
		credentials CREDENTIALS
	}
	etcd example.com
}
`

// captureLog tees CoreDNS's log into a buffer until t ends. Not for
// parallel tests.
func captureLog(t *testing.T) *lockedbuf.Buffer {
	t.Helper()
	var logs lockedbuf.Buffer
	stdlog.SetOutput(io.MultiWriter(os.Stderr, &logs))
	t.Cleanup(func() { stdlog.SetOutput(os.Stderr) })
	return &logs
}

// TestEtcdFailsClosed starts a view whose etcd connection is wrong in each
// of the ways operators get it wrong, on an etcd with TLS client
// certificates and auth: each fails closed, and says why within a few
// seconds: at start-up, or not ready, every query SERVFAIL, and a log line
// naming the cause in words.
func TestEtcdFailsClosed(t *testing.T) {
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	lab.AddUser(t, "reader", "reader-secret", etcdlab.Perm{Prefix: "/skydns/"})
	lab.AddUser(t, "nobody", "nobody-secret")
	other := testpki.NewCA(t, "other")
	otherClient := other.Issue(t, "coredns")
	tlsArgs := func(p testpki.Pair, ca string) string { return p.CertFile + " " + p.KeyFile + " " + ca }
	good := tlsArgs(lab.Client, lab.CA.CertFile)
	plain := "http://" + strings.TrimPrefix(lab.Member.ClientURL, "https://")
	for _, tc := range []struct {
		name, endpoint, tls, credentials string
		// atStart: start-up fails saying so; else the log says so.
		atStart bool
		want    string
	}{
		{"wrong password", lab.Member.ClientURL, good, "reader wrong-secret", false, "authentication failed"},
		{"client certificate of another CA", lab.Member.ClientURL, tlsArgs(otherClient, lab.CA.CertFile), "reader reader-secret", false, "etcd refused the client certificate"},
		{"server certificate not trusted", lab.Member.ClientURL, tlsArgs(lab.Client, other.CertFile), "reader reader-secret", false, "the server's certificate is not signed by the CA that tls names"},
		{"user without permission", lab.Member.ClientURL, good, "nobody nobody-secret", false, `permission denied: user "nobody" lacks the permission`},
		{"credentials over http", plain, good, "reader reader-secret", true, "credentials over " + plain + " would send the password in clear"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := captureLog(t)
			corefile := strings.NewReplacer("ETCD", tc.endpoint, "TLS", tc.tls, "CREDENTIALS", tc.credentials).Replace(failingCorefile)
			began := time.Now()
			c, err := tryStartCoreDNS(t, corefile)
			if tc.atStart {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "etcdzone") {
					t.Fatalf("start-up: %v, want an error of etcdzone saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("start-up: %v, want a server that is not ready", err)
			}
			eventually(t, failClosedWithin, "a log line naming the cause", func() error {
				if !strings.Contains(logs.String(), tc.want) {
					return io.EOF
				}
				return nil
			})
			t.Logf("told after %v", time.Since(began).Round(100*time.Millisecond))
			if r := query(t, "udp", c.Addr("dns"), "app.example.com.", dns.TypeA); r.Rcode != dns.RcodeServerFailure {
				t.Errorf("a query: %s, want SERVFAIL", dns.RcodeToString[r.Rcode])
			}
			resp, err := http.Get("http://" + net.JoinHostPort("127.0.0.1", strings.TrimPrefix(c.Addr("ready"), "127.0.0.1:")) + "/ready")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("/ready: %s, want 503", resp.Status)
			}
		})
	}
}
