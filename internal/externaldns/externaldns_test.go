package externaldns

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// label matches the random label external-dns puts under each name.
const label = `/[0-9a-f]{8}$`

func TestPutWritesExternalDNSFormat(t *testing.T) {
	cli := startEtcd(t)
	ctx := context.Background()
	records := []Record{
		{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}, Resource: "ingress/default/app"},
		{Name: "app.example.com", Type: "AAAA", Targets: []string{"fd00::51"}, TTL: 60, Resource: "ingress/default/app"},
		{Name: "www.example.com", Type: "CNAME", Targets: []string{"app.example.com"}, Resource: "service/web/www", Owner: "cluster-a"},
		{Name: "note.example.com", Type: "TXT", Targets: []string{"hello"}},
	}
	for _, r := range records {
		if err := Put(ctx, cli, "/skydns", r); err != nil {
			t.Fatal(err)
		}
	}
	got := dump(t, cli)
	want := []kv{
		{"/skydns/com/example/a-app", `{"text":"\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app\"","targetstrip":1}`},
		{"/skydns/com/example/aaaa-app", `{"text":"\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app\"","targetstrip":1}`},
		{"/skydns/com/example/app", `{"host":"192.168.0.51","targetstrip":1}`},
		{"/skydns/com/example/app", `{"host":"fd00::51","ttl":60,"targetstrip":1}`},
		{"/skydns/com/example/cname-www", `{"text":"\"heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/web/www\"","targetstrip":1}`},
		{"/skydns/com/example/note", `{"text":"hello","targetstrip":1}`},
		{"/skydns/com/example/www", `{"host":"app.example.com","targetstrip":1}`},
	}
	if len(got) != len(want) {
		t.Fatalf("etcd holds %d keys, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if !regexp.MustCompile("^"+regexp.QuoteMeta(w.key)+label).MatchString(got[i].key) || got[i].value != w.value {
			t.Errorf("key %d is %s = %s, want %s/<8 hex digits> = %s", i, got[i].key, got[i].value, w.key, w.value)
		}
	}
}

func TestDeleteRemovesNameAndOwnershipOnly(t *testing.T) {
	cli := startEtcd(t)
	ctx := context.Background()
	for _, r := range []Record{
		{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51", "192.168.0.52"}, Resource: "ingress/default/app"},
		{Name: "sub.app.example.com", Type: "A", Targets: []string{"192.168.0.53"}},
		{Name: "app2.example.com", Type: "A", Targets: []string{"192.168.0.54"}, Resource: "ingress/default/app2"},
	} {
		if err := Put(ctx, cli, "", r); err != nil {
			t.Fatal(err)
		}
	}
	if err := Delete(ctx, cli, "", "app.example.com"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range dump(t, cli) {
		names = append(names, labelRE.ReplaceAllString(p.key, ""))
	}
	want := []string{"/skydns/com/example/a-app2", "/skydns/com/example/app/sub", "/skydns/com/example/app2"}
	if !slices.Equal(names, want) {
		t.Errorf("after Delete etcd holds %v, want %v", names, want)
	}
}

func startEtcd(t *testing.T) *clientv3.Client {
	t.Helper()
	return etcdtest.StartT(t).Client()
}

// kv is one etcd key and its value.
type kv struct{ key, value string }

// labelRE matches the random label at the end of a key.
var labelRE = regexp.MustCompile(label)

// dump returns every key below /skydns/ with its value, sorted by key
// without its random label, then by value.
func dump(t *testing.T, cli *clientv3.Client) []kv {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/skydns/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var kvs []kv
	for _, p := range resp.Kvs {
		kvs = append(kvs, kv{string(p.Key), string(p.Value)})
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		return cmp.Or(strings.Compare(labelRE.ReplaceAllString(a.key, ""), labelRE.ReplaceAllString(b.key, "")), strings.Compare(a.value, b.value))
	})
	return kvs
}

func TestPutLegacyAndPTR(t *testing.T) {
	cli := startEtcd(t)
	ctx := context.Background()
	owner := `"\"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/%s\""`
	for _, r := range []Record{
		{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51", "192.168.0.52"}, Resource: "ingress/default/app", Format: Legacy},
		{Name: "app.example.com", Type: "AAAA", Targets: []string{"fd00::51"}, Resource: "ingress/default/app", Format: Legacy},
		{Name: "note.example.com", Type: "TXT", Targets: []string{"hello"}, Resource: "ingress/default/note", Format: Legacy},
		{Name: "51.0.168.192.in-addr.arpa", Type: "PTR", Targets: []string{"app.example.com"}, Resource: "ingress/default/app"},
	} {
		if err := Put(ctx, cli, "", r); err != nil {
			t.Fatal(err)
		}
	}
	want := []kv{
		{"/skydns/arpa/in-addr/192/168/0/51", `{"host":"app.example.com"}`},
		{"/skydns/arpa/in-addr/192/168/0/ptr-51", `{"text":` + fmt.Sprintf(owner, "app") + `}`},
		{"/skydns/com/example/a-app/*", `{"text":` + fmt.Sprintf(owner, "app") + `,"targetstrip":1}`},
		{"/skydns/com/example/aaaa-app/*", `{"text":` + fmt.Sprintf(owner, "app") + `,"targetstrip":1}`},
		{"/skydns/com/example/app/*", `{"host":"192.168.0.51","text":` + fmt.Sprintf(owner, "app") + `,"targetstrip":1}`},
		{"/skydns/com/example/app/*", `{"host":"192.168.0.52","targetstrip":1}`},
		{"/skydns/com/example/app/*", `{"host":"fd00::51","targetstrip":1}`},
		{"/skydns/com/example/note/*", `{"text":` + fmt.Sprintf(owner, "note") + `,"targetstrip":1}`},
		{"/skydns/com/example/note/*", `{"text":"hello","targetstrip":1}`},
		{"/skydns/com/example/txt-note/*", `{"text":` + fmt.Sprintf(owner, "note") + `,"targetstrip":1}`},
	}
	var got []kv
	for _, p := range dump(t, cli) {
		got = append(got, kv{labelRE.ReplaceAllString(p.key, "/*"), p.value})
	}
	if !slices.Equal(got, want) {
		t.Errorf("etcd holds\n%v\nwant\n%v", got, want)
	}

	if err := Delete(ctx, cli, "", "51.0.168.192.in-addr.arpa"); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, cli); len(got) != len(want)-2 || strings.Contains(got[0].key, "arpa") {
		t.Errorf("after deleting the PTR record etcd holds %v", got)
	}
}

func TestDeleteKeepingOwnership(t *testing.T) {
	cli := startEtcd(t)
	ctx := context.Background()
	for _, r := range []Record{
		{Name: "app.example.com", Type: "A", Targets: []string{"192.168.0.51"}, Resource: "ingress/default/app"},
		{Name: "51.0.168.192.in-addr.arpa", Type: "PTR", Targets: []string{"app.example.com"}, Resource: "ingress/default/app"},
	} {
		if err := Put(ctx, cli, "", r); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"app.example.com", "51.0.168.192.in-addr.arpa"} {
		if err := DeleteKeepingOwnership(ctx, cli, "", name); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, p := range dump(t, cli) {
		names = append(names, labelRE.ReplaceAllString(p.key, ""))
	}
	if want := []string{"/skydns/com/example/a-app"}; !slices.Equal(names, want) {
		t.Errorf("after DeleteKeepingOwnership etcd holds %v, want %v", names, want)
	}
}
