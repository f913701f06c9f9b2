package test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// startEtcd starts an embedded etcd server for t, with its data in t's
// temporary directory, and closes it when t ends. Its Endpoint goes into the
// etcd plugin's endpoint property; Stop and Restart simulate an outage.
func startEtcd(t testing.TB) *etcdtest.Server {
	t.Helper()
	return etcdtest.StartT(t)
}

// putRecords writes records into s under /skydns as external-dns does, with
// their ownership records.
func putRecords(t testing.TB, s *etcdtest.Server, records ...externaldns.Record) {
	t.Helper()
	for _, r := range records {
		if err := externaldns.Put(context.Background(), s.Client(), "/skydns", r); err != nil {
			t.Fatalf("write %s %s: %v", r.Type, r.Name, err)
		}
	}
}

// putKeys writes values under their keys into s, as a user does with
// etcdctl: SkyDNS values external-dns does not write (SRV, MX).
func putKeys(t testing.TB, s *etcdtest.Server, values map[string]string) {
	t.Helper()
	for key, value := range values {
		if _, err := s.Client().Put(context.Background(), key, value); err != nil {
			t.Fatalf("write %s: %v", key, err)
		}
	}
}

// putKeysInTxns writes values under their keys into s as putKeys does, but
// a hundred in one transaction: thousands of hosts in seconds.
func putKeysInTxns(t testing.TB, s *etcdtest.Server, values map[string]string) {
	t.Helper()
	var ops []clientv3.Op
	left := len(values)
	for key, value := range values {
		ops = append(ops, clientv3.OpPut(key, value))
		if left--; len(ops) == 100 || left == 0 {
			if _, err := s.Client().Txn(context.Background()).Then(ops...).Commit(); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
}

// deleteRecords removes from s every record of each name and its ownership
// records, as external-dns does when the resource behind it goes away.
func deleteRecords(t testing.TB, s *etcdtest.Server, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := externaldns.Delete(context.Background(), s.Client(), "/skydns", name); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
}

// stored returns what s holds for name under /skydns, as external-dns
// stores it: the host (address or canonical name) or the text of each key
// directly below the name's key, sorted.
func stored(t testing.TB, s *etcdtest.Server, name string) []string {
	t.Helper()
	dir := externaldns.Key("/skydns", name) + "/"
	resp, err := s.Client().Get(context.Background(), dir, clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var values []string
	for _, kv := range resp.Kvs {
		if strings.Contains(strings.TrimPrefix(string(kv.Key), dir), "/") {
			continue // a name below name
		}
		var v struct{ Host, Text string }
		if err := json.Unmarshal(kv.Value, &v); err != nil {
			t.Fatalf("%s: %v", kv.Key, err)
		}
		values = append(values, v.Host+v.Text)
	}
	slices.Sort(values)
	return values
}
