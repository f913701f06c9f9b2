package webhook

import (
	"context"
	"io"
	stdlog "log"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// start starts the webhook of the directive text (a block's zone is
// example.com) and returns the API's base URL and the health URL.
func start(t *testing.T, text string) (*Webhook, string, string) {
	t.Helper()
	c := caddy.NewTestController("dns", text)
	c.ServerBlockKeys = []string{"example.com."}
	w, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	w.store.Zones = []string{"example.com"}
	if err := w.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.stop() })
	health := ""
	if len(w.bound) > 1 {
		health = "http://" + w.bound[1].String() + "/healthz"
	}
	return w, "http://" + w.bound[0].String(), health
}

func call(t *testing.T, method, url, contentType, accept, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

const media = "application/external.dns.webhook+json;version=1"

// TestAPI checks each route's status and media type as external-dns's
// client reads them, and that a bad request gets its reason and writes
// nothing.
func TestAPI(t *testing.T) {
	etcd := etcdtest.StartT(t)
	_, base, health := start(t, "webhook 127.0.0.1:0 {\nendpoint "+etcd.Endpoint()+"\nhealth 127.0.0.1:0\n}")

	code, ct, body := call(t, "GET", base+"/", "", media, "")
	if code != 200 || ct != media || strings.TrimSpace(body) != `{"include":["example.com"]}` {
		t.Errorf("GET /: %d %q %s", code, ct, body)
	}
	create := `{"create":[{"dnsName":"app.example.com","targets":["192.168.0.51"],"recordType":"A","recordTTL":300,"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]}]}`
	if code, _, body := call(t, "POST", base+"/records", media, "", create); code != 204 {
		t.Errorf("POST /records: %d %s", code, body)
	}
	code, ct, body = call(t, "GET", base+"/records", "", media, "")
	want := `[{"dnsName":"app.example.com","targets":["192.168.0.51"],"recordType":"A","recordTTL":300,"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]}]`
	if code != 200 || ct != media || strings.TrimSpace(body) != want {
		t.Errorf("GET /records: %d %q %s", code, ct, body)
	}
	code, _, body = call(t, "POST", base+"/adjustendpoints", media, media, `[{"dnsName":"app.example.com","targets":["10 mx.example.com"],"recordType":"MX"},{"dnsName":"b.example.com","targets":["192.168.0.52"],"recordType":"A","providerSpecific":[{"name":"aws/weight","value":"1"}]}]`)
	if code != 200 || strings.TrimSpace(body) != `[{"dnsName":"b.example.com","targets":["192.168.0.52"],"recordType":"A"}]` {
		t.Errorf("POST /adjustendpoints: %d %s", code, body)
	}
	if code, _, body := call(t, "GET", health, "", "", ""); code != 200 {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
	readyz := strings.TrimSuffix(health, "/healthz") + "/readyz"
	if code, _, body := call(t, "GET", readyz, "", "", ""); code != 200 || body != "ok\n" {
		t.Errorf("GET /readyz: %d %s", code, body)
	}

	rev := revision(t, etcd.Client())
	for _, bad := range []struct {
		method, path, contentType, accept, body string
		code                                    int
		reason                                  string
	}{
		{"POST", "/records", media, "", `{"create":[{"dnsName":`, 400, "not the JSON of a change set"},
		{"POST", "/records", media, "", `{"create":[]} {}`, 400, "more than one JSON value"},
		{"POST", "/records", "text/plain", "", create, 415, `Content-Type "text/plain"`},
		{"POST", "/records", "application/external.dns.webhook+json;version=2", "", create, 415, "version=1"},
		{"GET", "/records", "", "text/html", "", 406, `Accept "text/html"`},
		{"GET", "/", "", "application/external.dns.webhook+json;version=9", "", 406, "does not allow"},
		{"POST", "/adjustendpoints", media, media, `{"dnsName":"x"}`, 400, "a list of endpoints"},
		{"DELETE", "/records", "", "", "", 405, ""},
		{"GET", "/nothing", "", "", "", 404, ""},
	} {
		code, _, body := call(t, bad.method, base+bad.path, bad.contentType, bad.accept, bad.body)
		if code != bad.code || !strings.Contains(body, bad.reason) {
			t.Errorf("%s %s (%s): %d %q, want %d with %q", bad.method, bad.path, bad.body, code, body, bad.code, bad.reason)
		}
	}
	if got := revision(t, etcd.Client()); got != rev {
		t.Errorf("bad requests wrote to etcd: revision %d, was %d", got, rev)
	}

	// etcd down: 503, which external-dns's client retries, and the
	// warning of the cut off says so (the webhook keeps no copy to answer
	// from).
	var logs lockedbuf.Buffer
	stdlog.SetOutput(&logs)
	defer stdlog.SetOutput(os.Stderr)
	etcd.Stop()
	if code, _, body := call(t, "GET", base+"/records", "", media, ""); code != 503 || !strings.Contains(body, "reading the records in etcd") {
		t.Errorf("GET /records with etcd down: %d %s", code, body)
	}
	if code, _, body := call(t, "POST", base+"/records", media, "", create); code != 503 {
		t.Errorf("POST /records with etcd down: %d %s", code, body)
	}
	// Readiness says so; liveness does not (a restart brings no etcd).
	if code, _, body := call(t, "GET", readyz, "", "", ""); code != 503 || !strings.Contains(body, "does not answer a read of /skydns/") || !strings.Contains(body, etcd.Endpoint()) {
		t.Errorf("GET /readyz with etcd down: %d %s, want 503 naming etcd and the tree", code, body)
	}
	if code, _, body := call(t, "GET", health, "", "", ""); code != 200 {
		t.Errorf("GET /healthz with etcd down: %d %s, want 200", code, body)
	}
	warning := "not heard from for "
	for deadline := time.Now().Add(2 * etcdclient.Unreachable); !strings.Contains(logs.String(), warning) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // the client's liveness ticks every second
	}
	if line := logs.String(); !strings.Contains(line, warning) || !strings.Contains(line, cutOff) || strings.Contains(line, "answering from memory") {
		t.Errorf("the warning of etcd cut off does not say what the webhook does:\n%s", line)
	}
	if err := etcd.Restart(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, _, body := call(t, "GET", readyz, "", "", "")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz after etcd came back: %d %s", code, body)
		}
	}
}

func revision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// TestParseErrors checks that a malformed directive stops start-up with
// its reason.
func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"webhook 0.0.0.0:8888":             "not a loopback address",
		"webhook [::]:8888":                "allow_remote",
		"webhook localhost":                "not host:port",
		"webhook a b":                      "one ADDRESS",
		"webhook {\nhealth\n}":             "health needs one ADDRESS",
		"webhook {\npath skydns\n}":        "starting with /",
		"webhook {\nmax_txn_ops 0\n}":      "max_txn_ops",
		"webhook {\nmax_body_size 1000\n}": `max_body_size "1000" needs one size in bytes`,
		"webhook {\nmax_body_size 2GiB\n}": `max_body_size "2GiB" needs one size in bytes (with KiB or MiB), from 1KiB up to 1024MiB`,
		"webhook {\nmax_body_size\n}":      `max_body_size "" needs one size`,
		"webhook {\nallow_remote x\n}":     "no argument",
		"webhook {\nbogus\n}":              "unknown property",
		"webhook {\ncredentials u p\n}":    "in clear",
		"webhook\nwebhook":                 "given twice",
		"webhook {\nendpoint ftp://x:1\n}": "not an etcd endpoint",
		"webhook 127.0.0.1:":               "has no port",
		"webhook {\nhealth :\n}":           "has no port",
	} {
		c := caddy.NewTestController("dns", text)
		if _, err := parse(c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	for _, text := range []string{
		"webhook",
		"webhook 127.0.0.1:8888 {\npath /skydns/\nhealth :8080\nmax_txn_ops 1024\nmax_body_size 64MiB\n}",
		"webhook 0.0.0.0:8888 {\nallow_remote\n}",
		"webhook [::1]:8888 {\ncredentials \"\" \"\"\ntls \"\" \"\" \"\"\n}",
	} {
		if _, err := parse(caddy.NewTestController("dns", text)); err != nil {
			t.Errorf("%q: %v", text, err)
		}
	}
}
