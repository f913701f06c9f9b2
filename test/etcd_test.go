package test

import (
	"context"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
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
