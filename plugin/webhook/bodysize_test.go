package webhook

import (
	"encoding/json"
	"fmt"
	stdlog "log"
	"os"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// hostChanges returns the change set external-dns v0.23 sends for hosts
// from to to-1 of its TXT registry: each host's A record, marked, and its
// ownership text (a-NAME).
func hostChanges(from, to int) string {
	var ch wire.Changes
	for i := from; i < to; i++ {
		name := fmt.Sprintf("host-%05d.apps.example.com", i)
		ch.Create = append(ch.Create,
			&wire.Endpoint{DNSName: name, Targets: []string{fmt.Sprintf("192.168.%d.%d", i/250, 1+i%250)}, RecordType: "A", RecordTTL: 300,
				ProviderSpecific: []wire.Property{{Name: "webhook/globaladdr-external", Value: "true"}}},
			&wire.Endpoint{DNSName: "a-" + name, RecordType: "TXT", RecordTTL: 300,
				Targets: []string{fmt.Sprintf(`"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/apps/host-%05d"`, i)}})
	}
	b, err := json.Marshal(ch)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestRecordsSize30000 measures GET /records of a tree of 30,000 hosts, as
// external-dns v0.23's TXT registry writes them: its reply must stay under
// half of the 32 MiB external-dns reads by default, which README.md's
// advice on splitting by --domain-filter is measured from.
func TestRecordsSize30000(t *testing.T) {
	if testing.Short() {
		t.Skip("30,000 hosts")
	}
	const hosts, batch = 30000, 2000
	etcd := etcdtest.StartT(t)
	_, base, _ := start(t, "webhook 127.0.0.1:0 {\nendpoint "+etcd.Endpoint()+"\n}")
	request := 0
	for i := 0; i < hosts; i += batch {
		body := hostChanges(i, i+batch)
		request = max(request, len(body))
		if code, _, reply := call(t, "POST", base+"/records", media, "", body); code != 204 {
			t.Fatalf("POST /records of hosts %d to %d: %d %s", i, i+batch, code, reply)
		}
	}
	code, _, body := call(t, "GET", base+"/records", "", media, "")
	var eps []wire.Endpoint
	if err := json.Unmarshal([]byte(body), &eps); code != 200 || err != nil || len(eps) != 2*hosts {
		t.Fatalf("GET /records: %d, %d endpoints (%v), want %d", code, len(eps), err, 2*hosts)
	}
	t.Logf("GET /records of %d hosts: %d bytes (%.1f MiB, %.0f bytes a host); a change set of %d hosts: %d bytes",
		hosts, len(body), float64(len(body))/(1<<20), float64(len(body))/hosts, batch, request)
	if len(body) > defaultMaxBody/2 {
		t.Errorf("GET /records of %d hosts is %d bytes, over half of external-dns's cap (%d)", hosts, len(body), defaultMaxBody)
	}
}

// TestBodyCap checks a request body over max_body_size (8KiB, for the
// test): 413, with the reason, logged, and nothing written; and that a GET
// /records reply crossing half of the cap and the cap is logged once each
// time, and again when it comes back under.
func TestBodyCap(t *testing.T) {
	var logs lockedbuf.Buffer
	stdlog.SetOutput(&logs)
	defer stdlog.SetOutput(os.Stderr)

	etcd := etcdtest.StartT(t)
	_, base, _ := start(t, "webhook 127.0.0.1:0 {\nendpoint "+etcd.Endpoint()+"\nmax_body_size 8KiB\n}")
	rev := revision(t, etcd.Client())
	code, _, body := call(t, "POST", base+"/records", media, "", hostChanges(0, 40))
	if code != 413 || !strings.Contains(body, "over max_body_size 8 KiB") || !strings.Contains(body, "--domain-filter") {
		t.Errorf("POST /records over the cap: %d %s, want 413 naming --domain-filter", code, body)
	}
	if !strings.Contains(logs.String(), "POST /records: the body is over") {
		t.Errorf("a body over the cap is not logged:\n%s", logs.String())
	}
	if got := revision(t, etcd.Client()); got != rev {
		t.Errorf("a body over the cap wrote to etcd: revision %d, was %d", got, rev)
	}

	get := func() {
		t.Helper()
		if code, _, body := call(t, "GET", base+"/records", "", media, ""); code != 200 {
			t.Fatalf("GET /records: %d %s", code, body)
		}
	}
	post := func(ch string) {
		t.Helper()
		if code, _, body := call(t, "POST", base+"/records", media, "", ch); code != 204 {
			t.Fatalf("POST /records: %d %s", code, body)
		}
	}
	// A host is about 370 bytes in GET /records: 5 hosts (1.8 KiB) are
	// under half of 8 KiB, 14 (5.1 KiB) over half, 24 (8.7 KiB) over it.
	post(hostChanges(0, 5))
	get()
	for _, step := range []struct {
		from, to int
		want     string
	}{
		{5, 14, "over half of max_body_size 8 KiB"},
		{14, 24, "it exits"},
	} {
		post(hostChanges(step.from, step.to))
		get()
		get()
		if n := strings.Count(logs.String(), step.want); n != 1 {
			t.Errorf("after %d hosts, %q logged %d times, want once:\n%s", step.to, step.want, n, logs.String())
		}
	}
	if strings.Contains(logs.String(), "under half") {
		t.Errorf("logged as back under half before it was:\n%s", logs.String())
	}
	for from := 1; from < 24; from += 10 {
		var del wire.Changes
		if err := json.Unmarshal([]byte(hostChanges(from, min(from+10, 24))), &del); err != nil {
			t.Fatal(err)
		}
		del.Delete, del.Create = del.Create, nil
		b, _ := json.Marshal(del)
		post(string(b))
	}
	get()
	if !strings.Contains(logs.String(), "under half of max_body_size 8 KiB again") {
		t.Errorf("back under half is not logged:\n%s", logs.String())
	}
}
