package test

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// sharedCorefile has two views of one etcd tree in one process, as
// single-process.Corefile has them, with three zones each, one of them
// inside another.
const sharedCorefile = `example.com:{port:internal} example.org:{port:internal} lan.example.com:{port:internal} {
	etcdzone {
		endpoint ETCD
		tls TLS
		credentials reader reader-secret
	}
	etcd example.com example.org lan.example.com
}

example.com:{port:external} example.org:{port:external} lan.example.com:{port:external} {
	globaladdr 203.0.113.10
	etcdzone {
		endpoint ETCD
		tls TLS
		credentials reader reader-secret
	}
	etcd example.com example.org lan.example.com
}
`

// TestEtcdzoneOneWatch serves six zones over two blocks from a real etcd
// with TLS and auth (Debian's): the process reads the tree with one
// connection and one watch, whose changes reach every zone of both views.
func TestEtcdzoneOneWatch(t *testing.T) {
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	lab.AddUser(t, "reader", "reader-secret", etcdlab.Perm{Prefix: "/skydns/"})
	putRecords2(t, lab, a("app.example.com", "192.168.0.51"), a("app.example.org", "192.168.0.52"), a("app.lan.example.com", "192.168.0.53"))
	watchers := func() (streams, watchers int) {
		body := etcdMetrics(t, lab)
		return etcdGauge(t, body, "etcd_debugging_mvcc_watch_stream_total"), etcdGauge(t, body, "etcd_debugging_mvcc_watcher_total")
	}
	streams0, watchers0 := watchers()
	corefile := strings.NewReplacer("ETCD", lab.Member.ClientURL, "TLS", lab.Client.CertFile+" "+lab.Client.KeyFile+" "+lab.CA.CertFile).Replace(sharedCorefile)
	c := startCoreDNS(t, corefile)
	views := map[string]string{"internal": "", "external": "203.0.113.10"}
	for view, global := range views {
		for host, internal := range map[string]string{"app.example.com.": "192.168.0.51", "app.example.org.": "192.168.0.52", "app.lan.example.com.": "192.168.0.53"} {
			want := cmp.Or(global, internal)
			eventually(t, 10*time.Second, view+" view: "+host, func() error {
				return answers(c.Addr(view), host, dns.TypeA, []string{want})
			})
		}
	}
	eventually(t, 10*time.Second, "one watch", func() error {
		if streams, watchers := watchers(); streams-streams0 != 1 || watchers-watchers0 != 1 {
			return fmt.Errorf("%d watch streams and %d watchers of CoreDNS, want 1 and 1", streams-streams0, watchers-watchers0)
		}
		return nil
	})
	putRecords2(t, lab, a("new.lan.example.com", "192.168.0.60"), a("new.example.org", "192.168.0.61"))
	for view, global := range views {
		for host, internal := range map[string]string{"new.lan.example.com.": "192.168.0.60", "new.example.org.": "192.168.0.61"} {
			want := cmp.Or(global, internal)
			eventually(t, 10*time.Second, view+" view: "+host, func() error {
				return answers(c.Addr(view), host, dns.TypeA, []string{want})
			})
		}
	}
	// Each name is its deepest zone's: lan.example.com answers below it.
	for view := range views {
		r := query(t, "udp", c.Addr(view), "missing.lan.example.com.", dns.TypeA)
		if r.Rcode != dns.RcodeNameError || len(r.Ns) != 1 || r.Ns[0].Header().Name != "lan.example.com." {
			t.Errorf("%s view: missing.lan.example.com: %s %v, want NXDOMAIN with lan.example.com's SOA", view, dns.RcodeToString[r.Rcode], r.Ns)
		}
	}
}

// etcdMetrics scrapes the lab's etcd's metrics, with its client
// certificate.
func etcdMetrics(t *testing.T, lab *etcdlab.Lab) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: lab.Config("", "").TLS}}
	resp, err := client.Get(lab.Member.ClientURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// etcdGauge returns the value of the gauge name in body.
func etcdGauge(t *testing.T, body, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in etcd's metrics", name)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return int(v)
}
