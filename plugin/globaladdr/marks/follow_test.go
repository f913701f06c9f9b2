package marks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/marks"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestFollow follows the marks of two zones of a real etcd as a user that
// may read only those zones (an RBAC role on their subtrees, as an
// operator gives the etcd plugin's user): the zones are read and watched
// one by one, a key outside them is neither read nor asked for, a change
// arrives by the watch, and while etcd is down the marks read last stay in
// use, and the watch resumes once it is back.
func TestFollow(t *testing.T) {
	srv := etcdtest.StartT(t)
	admin := srv.Client()
	put(t, admin, map[string]string{
		"/skydns/org/example/app/x1":     `{"host":"192.168.0.51"}`,
		"/skydns/net/example/shut/x1":    `{"host":"192.168.0.52","globaladdr-external":"false"}`,
		"/skydns/org/example/sub/www/x1": `{"host":"192.168.0.53","globaladdr-external":"true"}`,
		"/skydns/com/example/other":      `{"host":"192.168.0.54"}`,
	})
	etcdlab.EnableAuth(t, admin)
	root := login(t, srv, "root", etcdlab.RootPassword)
	etcdlab.AddUser(t, root, "zones", "zones-secret", etcdlab.Perm{Prefix: "/skydns/org/example/"}, etcdlab.Perm{Prefix: "/skydns/net/example/"})

	m := marks.New("/skydns", []string{"example.org.", "sub.example.org.", "example.net."})
	var mu sync.Mutex
	var failures []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Follow(ctx, login(t, srv, "zones", "zones-secret"), func(err error) {
			mu.Lock()
			defer mu.Unlock()
			failures = append(failures, err.Error())
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-m.Read():
	case <-time.After(10 * time.Second):
		t.Fatalf("the zones were not read: %v", failures)
	}
	mu.Lock()
	if len(failures) > 0 {
		t.Fatalf("the user of the zones failed: %v", failures)
	}
	mu.Unlock()
	want := func(name string, mark horizon.Mark) func() error {
		return func() error {
			if got, ok := m.Of(name); !ok || got != mark {
				return fmt.Errorf("%s: %v (known: %v), want %v", name, got, ok, mark)
			}
			return nil
		}
	}
	for _, check := range []func() error{
		want("app.example.org.", horizon.Unmarked),
		want("shut.example.net.", horizon.Withheld),
		want("www.sub.example.org.", horizon.Exposed),
	} {
		if err := check(); err != nil {
			t.Error(err)
		}
	}
	if _, ok := m.Of("other.example.com."); ok {
		t.Error("a key outside the zones has a mark")
	}

	put(t, root, map[string]string{"/skydns/org/example/app/x1": `{"host":"192.168.0.51","globaladdr-external":"false"}`})
	poll.Until(t, 10*time.Second, "a mark written after the read", want("app.example.org.", horizon.Withheld))

	srv.Stop()
	// etcd is down once a read fails: the watch waits for it meanwhile.
	down, cancelDown := context.WithTimeout(context.Background(), 2*time.Second)
	_, err := root.Get(down, "/skydns/org/example/")
	cancelDown()
	if err == nil {
		t.Fatal("etcd still answers after it stopped")
	}
	if err := want("app.example.org.", horizon.Withheld)(); err != nil || !m.Loaded() {
		t.Errorf("while etcd is down, the marks read last are not kept: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	put(t, root, map[string]string{"/skydns/net/example/shut/x1": `{"host":"192.168.0.52","globaladdr-external":"true"}`})
	poll.Until(t, 30*time.Second, "a mark written once etcd is back", want("shut.example.net.", horizon.Exposed))
}

// login returns a client of srv logged in as user.
func login(t *testing.T, srv *etcdtest.Server, user, password string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, Username: user, Password: password, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// put writes keys through c.
func put(t *testing.T, c *clientv3.Client, keys map[string]string) {
	t.Helper()
	for k, v := range keys {
		if _, err := c.Put(context.Background(), k, v); err != nil {
			t.Fatal(err)
		}
	}
}
