package records

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func newStore(t *testing.T) (*Store, *clientv3.Client) {
	t.Helper()
	cli := etcdtest.StartT(t).Client()
	return &Store{KV: cli, Prefix: "/skydns/", Zones: []string{"example.com", "168.192.in-addr.arpa"}, MaxOps: 128}, cli
}

// tree returns the values below /skydns/ by key.
func tree(t *testing.T, cli *clientv3.Client) map[string]string {
	t.Helper()
	resp, err := cli.Get(context.Background(), "/skydns/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out
}

// shape returns the tree with each random label replaced by *, sorted.
func shape(tr map[string]string) []string {
	var out []string
	for k, v := range tr {
		parts := strings.Split(k, "/")
		if last := parts[len(parts)-1]; len(last) == 8 && strings.Contains(v, `"targetstrip":1`) {
			parts[len(parts)-1] = "*"
		}
		out = append(out, strings.Join(parts, "/")+" "+v)
	}
	slices.Sort(out)
	return out
}

func apply(t *testing.T, s *Store, ch *wire.Changes) Result {
	t.Helper()
	res, err := s.Apply(context.Background(), ch)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func records(t *testing.T, s *Store) string {
	t.Helper()
	eps, err := s.Records(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(eps)
	return string(b)
}

const owner = `"heritage=external-dns,external-dns/owner=default,external-dns/resource=ingress/default/app"`

func mark(v string) []wire.Property {
	return []wire.Property{{Name: horizon.MarkProperty, Value: v}}
}

// TestApplyWritesAsTheCorednsProvider checks the keys of each record type
// and their round trip through Records, and that applying the same change
// set again writes nothing.
func TestApplyWritesAsTheCorednsProvider(t *testing.T) {
	s, cli := newStore(t)
	ch := &wire.Changes{Create: []*wire.Endpoint{
		{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.51", "192.168.0.52"}, RecordTTL: 300, ProviderSpecific: mark("false")},
		{DNSName: "app.example.com", RecordType: "AAAA", Targets: []string{"fd00::51"}},
		{DNSName: "a-app.example.com", RecordType: "TXT", Targets: []string{owner}, ProviderSpecific: mark("false")},
		{DNSName: "www.example.com", RecordType: "CNAME", Targets: []string{"app.example.com"}},
		{DNSName: "51.0.168.192.in-addr.arpa", RecordType: "PTR", Targets: []string{"app.example.com"}},
		{DNSName: "51.0.168.192.in-addr.arpa", RecordType: "TXT", Targets: []string{owner}},
	}}
	res := apply(t, s, ch)
	if res.Puts != 6 || res.Deletes != 0 || len(res.Refused) != 0 {
		t.Fatalf("first apply: %+v", res)
	}
	want := []string{
		`/skydns/arpa/in-addr/192/168/0/51 {"host":"app.example.com","text":` + jsonString(owner) + `}`,
		`/skydns/com/example/a-app/* {"text":` + jsonString(owner) + `,"targetstrip":1,"globaladdr-external":"false"}`,
		`/skydns/com/example/app/* {"host":"192.168.0.51","ttl":300,"targetstrip":1,"globaladdr-external":"false"}`,
		`/skydns/com/example/app/* {"host":"192.168.0.52","ttl":300,"targetstrip":1,"globaladdr-external":"false"}`,
		`/skydns/com/example/app/* {"host":"fd00::51","targetstrip":1}`,
		`/skydns/com/example/www/* {"host":"app.example.com","targetstrip":1}`,
	}
	if got := shape(tree(t, cli)); !slices.Equal(got, want) {
		t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got := records(t, s)
	wantRecords := `[{"dnsName":"51.0.168.192.in-addr.arpa","targets":["app.example.com"],"recordType":"PTR"},` +
		`{"dnsName":"51.0.168.192.in-addr.arpa","targets":[` + jsonString(owner) + `],"recordType":"TXT"},` +
		`{"dnsName":"a-app.example.com","targets":[` + jsonString(owner) + `],"recordType":"TXT","providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]},` +
		`{"dnsName":"app.example.com","targets":["192.168.0.51","192.168.0.52"],"recordType":"A","recordTTL":300,"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]},` +
		`{"dnsName":"app.example.com","targets":["fd00::51"],"recordType":"AAAA"},` +
		`{"dnsName":"www.example.com","targets":["app.example.com"],"recordType":"CNAME"}]`
	if got != wantRecords {
		t.Errorf("records:\n%s\nwant:\n%s", got, wantRecords)
	}
	if res := apply(t, s, ch); res.Puts+res.Deletes != 0 {
		t.Errorf("the same change set again wrote %+v", res)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestApplyUpdatesInPlace checks that an update keeps the keys of the
// targets that stay, rewrites them for a new TTL or mark, and touches no
// other name, not even one below the name changed.
func TestApplyUpdatesInPlace(t *testing.T) {
	s, cli := newStore(t)
	old := &wire.Endpoint{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.51", "192.168.0.52"}}
	below := &wire.Endpoint{DNSName: "x.app.example.com", RecordType: "A", Targets: []string{"192.168.0.60"}}
	apply(t, s, &wire.Changes{Create: []*wire.Endpoint{old, below}})
	before := tree(t, cli)

	next := &wire.Endpoint{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.52", "192.168.0.53"}, RecordTTL: 60, ProviderSpecific: mark("true")}
	res := apply(t, s, &wire.Changes{UpdateOld: []*wire.Endpoint{old}, UpdateNew: []*wire.Endpoint{next}})
	if res.Puts != 2 || res.Deletes != 1 {
		t.Errorf("update: %+v, want 2 puts (.52 rewritten, .53 new) and 1 delete (.51)", res)
	}
	after := tree(t, cli)
	for k, v := range before {
		switch {
		case strings.Contains(v, "192.168.0.52"):
			if !strings.Contains(after[k], `"ttl":60`) || !strings.Contains(after[k], `"globaladdr-external":"true"`) {
				t.Errorf("%s kept its key but not the new TTL and mark: %s", k, after[k])
			}
		case strings.Contains(v, "192.168.0.51"):
			if _, ok := after[k]; ok {
				t.Errorf("%s (.51) is still there", k)
			}
		default:
			if after[k] != v {
				t.Errorf("%s changed: %s, was %s", k, after[k], v)
			}
		}
	}
	res = apply(t, s, &wire.Changes{Delete: []*wire.Endpoint{next}})
	if res.Deletes != 2 || res.Puts != 0 {
		t.Errorf("delete: %+v", res)
	}
	if got := slices.Collect(maps.Values(tree(t, cli))); len(got) != 1 || !strings.Contains(got[0], "192.168.0.60") {
		t.Errorf("after the delete the tree holds %v, want x.app's record alone", got)
	}
}

// TestApplyLegacyValue checks a value with the ownership text beside the
// host, as external-dns's releases before v0.18 wrote it: Records gives both
// records, and deleting the text keeps the host in the same key.
func TestApplyLegacyValue(t *testing.T) {
	s, cli := newStore(t)
	key := "/skydns/com/example/app/1a2b3c4d"
	if _, err := cli.Put(context.Background(), key, `{"host":"192.168.0.51","text":`+jsonString(owner)+`,"targetstrip":1,"group":"g"}`); err != nil {
		t.Fatal(err)
	}
	got := records(t, s)
	if !strings.Contains(got, `"recordType":"A"`) || !strings.Contains(got, `"recordType":"TXT"`) {
		t.Fatalf("records: %s", got)
	}
	apply(t, s, &wire.Changes{Delete: []*wire.Endpoint{{DNSName: "app.example.com", RecordType: "TXT", Targets: []string{owner}}}})
	if v := tree(t, cli)[key]; v != `{"host":"192.168.0.51","targetstrip":1,"group":"g"}` {
		t.Errorf("after deleting the text: %s", v)
	}
}

// TestOwnershipTextApart checks a TXT record and its ownership record under
// the same name, as external-dns's releases before v0.18 write them: Records
// gives each its own endpoint (the TXT registry reads the labels from a TXT
// endpoint's first target, and would take the record for one), and a change
// of one leaves the other.
func TestOwnershipTextApart(t *testing.T) {
	s, cli := newStore(t)
	text := &wire.Endpoint{DNSName: "note.example.com", RecordType: "TXT", Targets: []string{"hello"}}
	owned := &wire.Endpoint{DNSName: "note.example.com", RecordType: "TXT", Targets: []string{owner}}
	apply(t, s, &wire.Changes{Create: []*wire.Endpoint{text, owned}})
	want := `[{"dnsName":"note.example.com","targets":[` + jsonString(owner) + `],"recordType":"TXT"},` +
		`{"dnsName":"note.example.com","targets":["hello"],"recordType":"TXT"}]`
	if got := records(t, s); got != want {
		t.Fatalf("records:\n%s\nwant:\n%s", got, want)
	}
	again := &wire.Endpoint{DNSName: "note.example.com", RecordType: "TXT", Targets: []string{"hello again"}}
	if res := apply(t, s, &wire.Changes{UpdateOld: []*wire.Endpoint{text}, UpdateNew: []*wire.Endpoint{again}}); res.Puts != 1 || res.Deletes != 1 {
		t.Errorf("update of the record: %+v, want 1 put and 1 delete", res)
	}
	if res := apply(t, s, &wire.Changes{Delete: []*wire.Endpoint{owned}}); res.Puts != 0 || res.Deletes != 1 {
		t.Errorf("delete of the ownership record: %+v, want 1 delete", res)
	}
	if got, want := shape(tree(t, cli)), []string{`/skydns/com/example/note/* {"text":"hello again","targetstrip":1}`}; !slices.Equal(got, want) {
		t.Errorf("tree: %s, want %s", got, want)
	}
}

// TestApexOwnership checks that the ownership record of a zone's apex,
// which the TXT registry names outside the zone (a-example.com), is stored
// and read back, as the coredns provider does, and nothing else outside the
// zones is.
func TestApexOwnership(t *testing.T) {
	s, cli := newStore(t)
	apex := &wire.Endpoint{DNSName: "example.com", RecordType: "A", Targets: []string{"192.168.0.50"}}
	owned := &wire.Endpoint{DNSName: "a-example.com", RecordType: "TXT", Targets: []string{owner}}
	if res := apply(t, s, &wire.Changes{Create: []*wire.Endpoint{apex, owned}}); res.Puts != 2 || len(res.Refused) != 0 {
		t.Fatalf("apply: %+v", res)
	}
	if _, err := cli.Put(context.Background(), "/skydns/com/txt-example/1a2b3c4d", `{"text":"hello","targetstrip":1}`); err != nil {
		t.Fatal(err)
	}
	want := `[{"dnsName":"a-example.com","targets":[` + jsonString(owner) + `],"recordType":"TXT"},` +
		`{"dnsName":"example.com","targets":["192.168.0.50"],"recordType":"A"}]`
	if got := records(t, s); got != want {
		t.Errorf("records:\n%s\nwant:\n%s", got, want)
	}
	for _, ep := range []*wire.Endpoint{
		{DNSName: "a-example.com", RecordType: "A", Targets: []string{"192.168.0.50"}},
		{DNSName: "a-example.com", RecordType: "TXT", Targets: []string{"hello"}},
		{DNSName: "a-example.com", RecordType: "TXT", Targets: []string{owner, "hello"}},
		{DNSName: "foo-example.com", RecordType: "TXT", Targets: []string{owner}},
		{DNSName: "a-example.org", RecordType: "TXT", Targets: []string{owner}},
		{DNSName: "a-x.example.org", RecordType: "TXT", Targets: []string{owner}},
	} {
		if err := s.Check(ep); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("%+v: %v, want outside the zones", ep, err)
		}
	}
	if res := apply(t, s, &wire.Changes{Delete: []*wire.Endpoint{owned}}); res.Deletes != 1 {
		t.Errorf("delete: %+v", res)
	}
}

// TestIsOwnership checks which texts the TXT registry takes for its labels.
func TestIsOwnership(t *testing.T) {
	for text, want := range map[string]bool{
		owner: true,
		`heritage=external-dns,external-dns/owner=default`:   true,
		`"external-dns/owner=default,heritage=external-dns"`: true,
		`"heritage=external-dns-not"`:                        false,
		`hello`:                                              false,
		`v=spf1 -all`:                                        false,
	} {
		if got := isOwnership(text); got != want {
			t.Errorf("isOwnership(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestApplyBatches checks that a change set larger than one transaction
// may hold is written whole.
func TestApplyBatches(t *testing.T) {
	s, cli := newStore(t)
	s.MaxOps = 4
	var eps []*wire.Endpoint
	for i := range 10 {
		eps = append(eps, &wire.Endpoint{DNSName: fmt.Sprintf("h%d.example.com", i), RecordType: "A", Targets: []string{"192.168.0.1", "192.168.0.2", "192.168.0.3"}})
	}
	eps = append(eps, &wire.Endpoint{DNSName: "many.example.com", RecordType: "A", Targets: []string{"192.168.1.1", "192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5", "192.168.1.6"}})
	res := apply(t, s, &wire.Changes{Create: eps})
	if res.Puts != 36 || len(tree(t, cli)) != 36 {
		t.Errorf("%+v, %d keys; want 36", res, len(tree(t, cli)))
	}
}

// raceKV changes a key of a name between Apply's read and its write, the
// first time.
type raceKV struct {
	clientv3.KV
	once bool
}

func (r *raceKV) Txn(ctx context.Context) clientv3.Txn {
	if !r.once {
		r.once = true
		r.KV.Put(ctx, "/skydns/com/example/app/99999999", `{"host":"192.168.0.99","targetstrip":1}`)
	}
	return r.KV.Txn(ctx)
}

// TestApplyRereadsAfterAConflict checks that a change set that meets a key
// written since its read is computed again from the tree as it is.
func TestApplyRereadsAfterAConflict(t *testing.T) {
	s, cli := newStore(t)
	s.KV = &raceKV{KV: cli}
	apply(t, s, &wire.Changes{Create: []*wire.Endpoint{{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.51"}}}})
	got := records(t, s)
	if !strings.Contains(got, `"targets":["192.168.0.51","192.168.0.99"]`) {
		t.Errorf("records: %s", got)
	}
}

// TestCheckRefuses checks what the SkyDNS format can't hold.
func TestCheckRefuses(t *testing.T) {
	s := &Store{Prefix: "/skydns/", Zones: []string{"example.com"}}
	for _, ep := range []*wire.Endpoint{
		{DNSName: "app.example.org", RecordType: "A", Targets: []string{"192.0.2.1"}},
		{DNSName: "app.example.com", RecordType: "MX", Targets: []string{"10 mail.example.com"}},
		{DNSName: "app.example.com", RecordType: "A", Targets: []string{"fd00::1"}},
		{DNSName: "app.example.com", RecordType: "AAAA", Targets: []string{"192.0.2.1"}},
		{DNSName: "app.example.com", RecordType: "CNAME", Targets: []string{"a.example.com", "b.example.com"}},
		{DNSName: "app.example.com", RecordType: "CNAME", Targets: []string{"192.0.2.1"}},
		{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, SetIdentifier: "eu"},
		{DNSName: "app.example.com", RecordType: "A"},
		{DNSName: "a/b.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}},
		{DNSName: "app.example.com", RecordType: "PTR", Targets: []string{"x.example.com"}},
	} {
		if err := s.Check(ep); err == nil {
			t.Errorf("%+v passed", ep)
		}
	}
	kept, refused := s.Adjust([]*wire.Endpoint{
		{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.0.2.1"}, ProviderSpecific: []wire.Property{{Name: "webhook/other", Value: "x"}, {Name: horizon.MarkProperty, Value: "true"}}},
		{DNSName: "*.example.com", RecordType: "TXT", Targets: []string{"v=spf1 -all"}},
		{DNSName: "app.example.com", RecordType: "SRV", Targets: []string{"0 0 80 app.example.com"}},
	})
	if len(kept) != 2 || len(refused) != 1 || !slices.Equal(kept[0].ProviderSpecific, mark("true")) {
		t.Errorf("adjust kept %+v, refused %+v", kept, refused)
	}
}

// countingKV counts the transactions it commits.
type countingKV struct {
	clientv3.KV
	txns int
}

func (c *countingKV) Txn(ctx context.Context) clientv3.Txn {
	c.txns++
	return c.KV.Txn(ctx)
}

// TestApplyKeyOrder checks that names whose checks cover each other's keys
// (the apex covers every name, app covers app-x) are written in key order,
// one transaction each, without meeting their own writes.
func TestApplyKeyOrder(t *testing.T) {
	s, cli := newStore(t)
	kv := &countingKV{KV: cli}
	s.KV, s.MaxOps = kv, 1
	res := apply(t, s, &wire.Changes{Create: []*wire.Endpoint{
		{DNSName: "app-x.example.com", RecordType: "A", Targets: []string{"192.168.0.3"}},
		{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.2"}},
		{DNSName: "example.com", RecordType: "A", Targets: []string{"192.168.0.1"}},
	}})
	if res.Puts != 3 || kv.txns != 3 {
		t.Errorf("%+v in %d transactions, want 3 puts in 3", res, kv.txns)
	}
}

// TestRecordsMixedMarks checks that a record set whose keys are marked
// otherwise (a change cut short) reads back with a mark external-dns never
// sends, so that its next sync writes it again.
func TestRecordsMixedMarks(t *testing.T) {
	s, cli := newStore(t)
	for key, value := range map[string]string{
		"/skydns/com/example/app/00000001": `{"host":"192.168.0.1","targetstrip":1,"globaladdr-external":"true"}`,
		"/skydns/com/example/app/00000002": `{"host":"192.168.0.2","targetstrip":1}`,
	} {
		if _, err := cli.Put(context.Background(), key, value); err != nil {
			t.Fatal(err)
		}
	}
	if got := records(t, s); !strings.Contains(got, `"value":"mixed"`) {
		t.Errorf("records: %s", got)
	}
}

// TestApplyReverseAttrs checks that a reverse name's text with another TTL
// than its PTR record's gets a key of its own, and reads back as written.
func TestApplyReverseAttrs(t *testing.T) {
	s, _ := newStore(t)
	ch := &wire.Changes{Create: []*wire.Endpoint{
		{DNSName: "51.0.168.192.in-addr.arpa", RecordType: "PTR", Targets: []string{"app.example.com"}, RecordTTL: 300},
		{DNSName: "51.0.168.192.in-addr.arpa", RecordType: "TXT", Targets: []string{owner}, RecordTTL: 60},
	}}
	apply(t, s, ch)
	got := records(t, s)
	if !strings.Contains(got, `"recordType":"PTR","recordTTL":300`) || !strings.Contains(got, `"recordType":"TXT","recordTTL":60`) {
		t.Errorf("records: %s", got)
	}
	if res := apply(t, s, ch); res.Puts+res.Deletes != 0 {
		t.Errorf("the same change set again wrote %+v", res)
	}
}

// TestApplyRefusedUpdateKeepsOld checks that an update whose new record set
// is refused leaves the old one in place.
func TestApplyRefusedUpdateKeepsOld(t *testing.T) {
	s, cli := newStore(t)
	old := &wire.Endpoint{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.51"}}
	apply(t, s, &wire.Changes{Create: []*wire.Endpoint{old}})
	res := apply(t, s, &wire.Changes{UpdateOld: []*wire.Endpoint{old}, UpdateNew: []*wire.Endpoint{{DNSName: "app.example.com", RecordType: "A", Targets: []string{"fd00::1"}}}})
	if len(res.Refused) != 1 || res.Deletes != 0 || len(tree(t, cli)) != 1 {
		t.Errorf("%+v, tree %v", res, tree(t, cli))
	}
}

// TestApplyRoute checks that an endpoint's route (horizon.RouteProperty)
// is stored beside its mark, in each key, and reads back as written, so
// that external-dns plans no change at its next sync; a change of the
// route alone rewrites the keys, and keys routed otherwise read back mixed.
func TestApplyRoute(t *testing.T) {
	s, cli := newStore(t)
	props := []wire.Property{{Name: horizon.MarkProperty, Value: "true"}, {Name: horizon.RouteProperty, Value: "tunnel"}}
	ep := &wire.Endpoint{DNSName: "app.example.com", RecordType: "A", Targets: []string{"192.168.0.51"}, RecordTTL: 300, ProviderSpecific: props}
	apply(t, s, &wire.Changes{Create: []*wire.Endpoint{ep}})
	for k, v := range tree(t, cli) {
		if !strings.Contains(v, `"globaladdr-external":"true","globaladdr-target":"tunnel"`) {
			t.Errorf("%s: %s", k, v)
		}
	}
	want := `[{"dnsName":"app.example.com","targets":["192.168.0.51"],"recordType":"A","recordTTL":300,"providerSpecific":[{"name":"webhook/globaladdr-external","value":"true"},{"name":"webhook/globaladdr-target","value":"tunnel"}]}]`
	if got := records(t, s); got != want {
		t.Errorf("records:\n got %s\nwant %s", got, want)
	}
	if kept, _ := s.Adjust([]*wire.Endpoint{ep}); !slices.Equal(kept[0].ProviderSpecific, props) {
		t.Errorf("adjust kept %+v", kept[0].ProviderSpecific)
	}

	next := *ep
	next.ProviderSpecific = []wire.Property{{Name: horizon.MarkProperty, Value: "true"}, {Name: horizon.RouteProperty, Value: "address"}}
	if res := apply(t, s, &wire.Changes{UpdateOld: []*wire.Endpoint{ep}, UpdateNew: []*wire.Endpoint{&next}}); res.Puts != 1 {
		t.Errorf("a new route: %+v, want one key rewritten", res)
	}
	if got := records(t, s); !strings.Contains(got, `"value":"address"`) {
		t.Errorf("records after the new route: %s", got)
	}
	if _, err := cli.Put(context.Background(), "/skydns/com/example/app/00000002", `{"host":"192.168.0.52","targetstrip":1,"globaladdr-external":"true","globaladdr-target":"tunnel"}`); err != nil {
		t.Fatal(err)
	}
	if got := records(t, s); !strings.Contains(got, `{"name":"webhook/globaladdr-target","value":"mixed"}`) || strings.Contains(got, `"webhook/globaladdr-external","value":"mixed"`) {
		t.Errorf("records of keys routed otherwise: %s", got)
	}
}
