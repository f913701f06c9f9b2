package marks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
)

// TestWatchCompacted starts a watch of the marks from a revision etcd has
// compacted: it fails with an error that says so (Follow then reads the
// zones whole again).
func TestWatchCompacted(t *testing.T) {
	srv := etcdtest.StartT(t)
	c := srv.Client()
	m := New("/skydns", []string{"example.org."})
	rev, err := m.load(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(context.Background(), "/skydns/org/example/app/x1", `{"host":"192.168.0.51"}`); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Put(context.Background(), "/skydns/org/example/app/x2", `{"host":"192.168.0.52"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(context.Background(), resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.watch(ctx, c, rev+1); err == nil || !strings.Contains(err.Error(), "compacted") {
		t.Errorf("a watch from a compacted revision: %v, want one that says so", err)
	}
}
