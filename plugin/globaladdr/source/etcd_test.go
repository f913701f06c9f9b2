package source

import (
	"context"
	"testing"
	"time"

	"github.com/coredns/caddy"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
)

// etcdWithKey starts an embedded etcd for the test, holding value under key
// unless value is "", and closes it when the test ends.
func etcdWithKey(t *testing.T, key, value string) *etcdtest.Server {
	t.Helper()
	srv, err := etcdtest.Start(t.TempDir())
	if err != nil {
		t.Fatalf("etcd did not start: %v", err)
	}
	t.Cleanup(srv.Close)
	if value != "" {
		put(t, srv, key, value)
	}
	return srv
}

// put writes value under key, and returns when it began to.
func put(t *testing.T, srv *etcdtest.Server, key, value string) time.Time {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if _, err := srv.Client().Put(ctx, key, value); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return start
}

// etcdCorefile is a globaladdr block watching key through its own
// connection to srv.
func etcdCorefile(srv *etcdtest.Server, key string) string {
	return "globaladdr {\n from etcd " + key + "\n endpoint " + srv.Endpoint() + "\n}"
}

func TestSourceEtcd(t *testing.T) {
	t.Parallel()
	key := "/globaladdr/" + t.Name()
	srv := etcdWithKey(t, key, "")
	s := startSources(t, etcdCorefile(srv, key), nil)

	waitErrors(t, "etcd "+key, 1)
	if s.Ready() || current(s) != "" {
		t.Fatalf("no key: want not ready, have %q", current(s))
	}

	written := put(t, srv, key, "203.0.113.10")
	waitAddrs(t, s, "203.0.113.10")
	t.Logf("first value served %v after the write began", time.Since(written))
	if !s.Ready() {
		t.Fatal("want ready")
	}

	written = put(t, srv, key, "# both uplinks\n203.0.113.10 2001:db8::10\n203.0.113.11 2001:db8::11\n")
	waitAddrs(t, s, "203.0.113.10 203.0.113.11 2001:db8::10 2001:db8::11")
	t.Logf("change served %v after the write began", time.Since(written))

	ctx := context.Background()
	if _, err := srv.Client().Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	waitErrors(t, "etcd "+key, 2)
	for i, bad := range []string{"garbage", "203.0.113.12 10.0.0.1", ""} {
		put(t, srv, key, bad)
		waitErrors(t, "etcd "+key, float64(3+i))
	}
	if current(s) != "203.0.113.10 203.0.113.11 2001:db8::10 2001:db8::11" {
		t.Fatalf("deleted key, garbage: want the last good addresses kept, have %q", current(s))
	}

	written = put(t, srv, key, "198.51.100.20")
	waitAddrs(t, s, "198.51.100.20")
	t.Logf("valid value after garbage served %v after the write began", time.Since(written))
}

func TestSourceEtcdRestart(t *testing.T) {
	t.Parallel()
	key := "/globaladdr/" + t.Name()
	srv := etcdWithKey(t, key, "203.0.113.10")
	s := startSources(t, etcdCorefile(srv, key), nil)
	waitAddrs(t, s, "203.0.113.10")

	srv.Stop()
	if current(s) != "203.0.113.10" {
		t.Fatalf("etcd down: want the last good address kept, have %q", current(s))
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	written := put(t, srv, key, "203.0.113.20")
	took := time.Since(written)
	waitAddrs(t, s, "203.0.113.20")
	t.Logf("change after an etcd restart mid-watch served %v after the write began (the write took %v)", time.Since(written), took)
}

func TestSourceEtcdCompaction(t *testing.T) {
	t.Parallel()
	key := "/globaladdr/" + t.Name()
	srv := etcdWithKey(t, key, "203.0.113.10")
	watches := make(chan int64, 10)
	s := startSources(t, etcdCorefile(srv, key), func(set *Set) {
		// Before the first watch starts, the key changes twice and etcd
		// compacts its history: the watch must fail, and the source read
		// the key again.
		src := set.feeds[0].src.(*etcdSource)
		src.watching = func(rev int64) {
			if len(watches) == 0 {
				if err := changeAndCompact(srv, key, "203.0.113.11", "203.0.113.12"); err != nil {
					t.Error(err)
				}
			}
			select {
			case watches <- rev:
			default:
			}
		}
	})
	waitAddrs(t, s, "203.0.113.12")
	if first, second := <-watches, <-watches; second <= first {
		t.Errorf("watches from revision %d, then %d: want the second after the compaction", first, second)
	}

	// A compaction during a live watch changes nothing.
	if err := changeAndCompact(srv, key, "203.0.113.13"); err != nil {
		t.Fatal(err)
	}
	waitAddrs(t, s, "203.0.113.13")
	put(t, srv, key, "203.0.113.14")
	waitAddrs(t, s, "203.0.113.14")
}

// changeAndCompact writes values under key in turn, then compacts etcd's
// history up to the last write.
func changeAndCompact(srv *etcdtest.Server, key string, values ...string) error {
	ctx := context.Background()
	var rev int64
	for _, v := range values {
		resp, err := srv.Client().Put(ctx, key, v)
		if err != nil {
			return err
		}
		rev = resp.Header.Revision
	}
	_, err := srv.Client().Compact(ctx, rev)
	return err
}

func TestSourceEtcdUnreachable(t *testing.T) {
	t.Parallel()
	key := "/globaladdr/" + t.Name()
	srv := etcdWithKey(t, key, "203.0.113.10")
	srv.Stop()
	// With credentials, the client logs in as it connects: start-up must
	// not wait for that.
	s := startSources(t, "globaladdr {\n from etcd "+key+"\n endpoint "+srv.Endpoint()+"\n credentials root secret\n plaintext_credentials\n}", nil)
	waitErrors(t, "etcd "+key, 1)
	if s.Ready() {
		t.Fatal("etcd down at start-up: want not ready")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd back: value served after %v", waitAddrs(t, s, "203.0.113.10"))
}

// TestSourceEtcdSharedClient starts an etcd source given the client of the
// block's etcd plugin: it must connect to its endpoints, and leave it open
// when it stops.
func TestSourceEtcdSharedClient(t *testing.T) {
	t.Parallel()
	key := "/globaladdr/" + t.Name()
	srv := etcdWithKey(t, key, "203.0.113.10")
	set, err := newSet(caddy.NewTestController("dns", "globaladdr {\n from etcd "+key+"\n}"))
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, set, srv.Client())

	waitAddrs(t, s, "203.0.113.10")
	if got := set.etcd.cfg.Endpoints; len(got) != 1 || got[0] != srv.Endpoint() {
		t.Fatalf("the sources connected to %v, not to the etcd plugin's endpoint %s", got, srv.Endpoint())
	}
	put(t, srv, key, "203.0.113.20")
	waitAddrs(t, s, "203.0.113.20")

	if err := set.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client().Get(context.Background(), key); err != nil {
		t.Fatalf("the etcd plugin's client after the sources stopped: %v", err)
	}
}
