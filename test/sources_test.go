package test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/goroutines"
)

// sourceDeadline bounds every wait for a source's value to be served:
// generous, for a loaded machine. The tests log how long it took.
const sourceDeadline = 30 * time.Second

// sourcesCorefile is an external view whose global address comes from the
// from sources SOURCES, with the ready plugin. ETCD stands for etcd's
// endpoint.
const sourcesCorefile = `
example.com:{port:external} {
	ready 127.0.0.1:{httpport:ready}
	globaladdr {
		SOURCES
	}
	etcd example.com {
		endpoint ETCD
	}
}
`

// startSourcesView starts etcd with app.example.com at 192.168.0.51, and a
// CoreDNS serving it through sourcesCorefile.
func startSourcesView(t *testing.T, sources string) (*coreDNS, *etcdtest.Server) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	corefile := strings.NewReplacer("ETCD", etcd.Endpoint(), "SOURCES", sources).Replace(sourcesCorefile)
	return startCoreDNS(t, corefile), etcd
}

// answer returns the rcode of the reply to an A query for name, and its
// addresses, e.g. "NOERROR 203.0.113.10".
func answer(t *testing.T, addr, name string) string {
	t.Helper()
	r := query(t, "udp", addr, name, dns.TypeA)
	s := dns.RcodeToString[r.Rcode]
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			s += " " + a.A.String()
		}
	}
	return s
}

// ready returns the status code of the ready plugin at addr.
func ready(t *testing.T, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/ready")
	if err != nil {
		t.Fatalf("ready: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitServed polls until the answer for app.example.com is want, and returns
// how long it took since start.
func waitServed(t *testing.T, c *coreDNS, want string, start time.Time) time.Duration {
	t.Helper()
	for {
		got := answer(t, c.Addr("external"), "app.example.com")
		if got == want {
			return time.Since(start)
		}
		if time.Since(start) > sourceDeadline {
			t.Fatalf("after %v app.example.com is %q, want %q", sourceDeadline, got, want)
		}
		time.Sleep(10 * time.Millisecond) // polling, with a deadline
	}
}

// checkFollows checks that CoreDNS fails closed until the source has a
// value (SERVFAIL, not the internal address, and not ready), then that the
// answers follow the source; set(v) makes v its value. It logs how long each
// value took to be served.
func checkFollows(t *testing.T, c *coreDNS, source string, set func(v string)) {
	t.Helper()
	if got := answer(t, c.Addr("external"), "app.example.com"); got != "SERVFAIL" {
		t.Errorf("no global address yet: app.example.com is %q, want SERVFAIL", got)
	}
	if code := ready(t, c.Addr("ready")); code != http.StatusServiceUnavailable {
		t.Errorf("no global address yet: ready answers %d, want 503", code)
	}
	for i, v := range []string{"203.0.113.10", "203.0.113.20", "198.51.100.30"} {
		written := time.Now()
		set(v)
		took := waitServed(t, c, "NOERROR "+v, written)
		if i == 0 {
			t.Logf("%s: first value served %v after the write began", source, took)
			if code := ready(t, c.Addr("ready")); code != http.StatusOK {
				t.Errorf("ready answers %d, want 200", code)
			}
		} else {
			t.Logf("%s: change served %v after the write began", source, took)
		}
	}
}

func TestSourceFileServfailThenReady(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wan")
	c, _ := startSourcesView(t, "from file "+path)
	checkFollows(t, c, "from file", func(v string) {
		// As a hook should write it: to a new file renamed over the old.
		if err := os.WriteFile(path+".new", []byte("# WAN address\n"+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	})

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := answer(t, c.Addr("external"), "app.example.com"); got != "NOERROR 198.51.100.30" {
		t.Errorf("file deleted: app.example.com is %q, want the last good address", got)
	}
}

// TestSourceEtcdServfailThenReady watches a key through the connection of the
// block's etcd plugin.
func TestSourceEtcdServfailThenReady(t *testing.T) {
	t.Parallel()
	const key = "/globaladdr/wan"
	c, etcd := startSourcesView(t, "from etcd "+key)
	ctx := context.Background()
	checkFollows(t, c, "from etcd", func(v string) {
		if _, err := etcd.Client().Put(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	})

	etcd.Stop()
	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	if _, err := etcd.Client().Put(ctx, key, "203.0.113.40"); err != nil {
		t.Fatal(err)
	}
	t.Logf("from etcd: change after an etcd restart served %v after the write began (the etcd plugin's connection reconnects)",
		waitServed(t, c, "NOERROR 203.0.113.40", written))
}

// TestSourceReloadAndShutdownLeakNothing reloads a Corefile with every kind
// of source, as the reload plugin does, then shuts CoreDNS down: no
// goroutine of globaladdr, of an etcd client or of a gRPC connection may be
// left, neither of the reloaded instance nor of the last one.
func TestSourceReloadAndShutdownLeakNothing(t *testing.T) {
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"))
	if _, err := etcd.Client().Put(context.Background(), "/globaladdr/wan", "203.0.113.10"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wan6")
	if err := os.WriteFile(path, []byte("2001:db8::10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two blocks: one watches through the etcd plugin's connection, the
	// other through one of its own.
	corefile := strings.NewReplacer("ETCD", etcd.Endpoint(), "WAN6", path).Replace(`
example.com:{port:external} {
	globaladdr {
		from etcd /globaladdr/wan
		from file WAN6
	}
	etcd example.com {
		endpoint ETCD
	}
}
example.com:{port:external2} {
	globaladdr {
		from etcd /globaladdr/wan
		endpoint ETCD
	}
	etcd example.com {
		endpoint ETCD
	}
}
`)
	before := goroutines.Take()
	c := startCoreDNS(t, corefile)
	waitServed(t, c, "NOERROR 203.0.113.10", time.Now())

	for i := range 3 {
		reloaded := strings.Replace(corefile, "example.com:{port:external} {", "example.com:{port:external} {\n\t# reload "+strconv.Itoa(i), 1)
		c.Reload(t, reloaded)
		waitServed(t, c, "NOERROR 203.0.113.10", time.Now())
	}
	c.Stop()

	if left := before.Left(sourceDeadline, "plugin/globaladdr", "go.etcd.io/etcd/client/v3", "google.golang.org/grpc"); len(left) > 0 {
		t.Fatalf("%d goroutines left after reloads and shutdown:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

func TestSourceCorefileMistakes(t *testing.T) {
	for _, tc := range []struct{ sources, want string }{
		{"from file", `Corefile:5 - Error during parsing: from needs a source and its argument: from file PATH, from etcd KEY or from interface NAME, after "file"`},
		{"from file /run/wan\n\t\tfrom file /run/wan", `Corefile:6 - Error during parsing: "/run/wan": the source file /run/wan is given twice`},
		{"from etcd /wan\n\t\tendpoint localhost", `Corefile:6 - Error during parsing: "localhost" is not an etcd endpoint URL`},
	} {
		_, err := tryStartCoreDNS(t, strings.NewReplacer("ETCD", "http://127.0.0.1:1", "SOURCES", tc.sources).Replace(sourcesCorefile))
		if err == nil || !strings.Contains(err.Error(), "plugin/globaladdr: "+tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.sources, err, tc.want)
		}
	}
}
