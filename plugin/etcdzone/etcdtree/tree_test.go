package etcdtree

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// recorder is a Follower that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	idx     *zone.Index
	written int64
	changed map[string]bool
	rev     int64
	calls   int
}

func (r *recorder) NewIndex() *zone.Index { return zone.NewIndex(nil) }

func (r *recorder) Accept(_ string, _ *zone.Source, err error) bool { return err == nil }

func (r *recorder) Install(idx *zone.Index, written int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idx, r.written = idx, written
	r.calls++
}

func (r *recorder) Changed(changed map[string]bool, rev int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = map[string]bool{}
	}
	for name := range changed {
		r.changed[name] = true
	}
	r.rev = max(r.rev, rev)
	r.calls++
}

func (r *recorder) Rejudge() {}

func (r *recorder) Failed() {}

// state returns the revision of the zone's last change, 0 until installed.
func (r *recorder) state() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.idx == nil {
		return 0
	}
	return max(r.written, r.rev)
}

func (r *recorder) saw(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed[name]
}

// read reads a key as a TXT record of its value at the name of its key.
func read(key string, kv *mvccpb.KeyValue) (*zone.Source, error) {
	if string(kv.Value) == "garbage" {
		return nil, errors.New("garbage")
	}
	owner := strings.TrimPrefix(key, "/skydns/")
	labels := strings.Split(owner, "/")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	owner = dns.Fqdn(strings.Join(labels, "."))
	return &zone.Source{Key: key, Owner: owner, RRs: []dns.RR{
		&dns.TXT{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{string(kv.Value)}},
	}}, nil
}

// startEtcd starts an embedded etcd, until t ends.
func startEtcd(t *testing.T) *etcdtest.Server {
	t.Helper()
	s, err := etcdtest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// startTree follows s's /skydns tree until t ends.
func startTree(t *testing.T, s *etcdtest.Server) *Tree {
	tr := New(Config{Client: s.Client(), Path: "/skydns", Read: read, Stream: t.Name()})
	t.Cleanup(tr.Stop)
	return tr
}

// do runs etcd operations: "put KEY VALUE" or "del KEY"; it returns the
// revision of the last.
func do(t *testing.T, s *etcdtest.Server, ops ...string) int64 {
	t.Helper()
	var rev int64
	for _, op := range ops {
		f := strings.Fields(op)
		var err error
		switch f[0] {
		case "put":
			resp, e := s.Client().Put(context.Background(), f[1], f[2])
			err = e
			if e == nil {
				rev = resp.Header.Revision
			}
		case "del":
			resp, e := s.Client().Delete(context.Background(), f[1])
			err = e
			if e == nil {
				rev = resp.Header.Revision
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return rev
}

// installed waits until each of rs is installed.
func installed(t *testing.T, rs ...*recorder) {
	t.Helper()
	poll.Until(t, 10*time.Second, "the zones installed", func() error {
		for i, r := range rs {
			if r.state() == 0 {
				return fmt.Errorf("zone %d not installed", i)
			}
		}
		return nil
	})
}

// TestLastChange tells each zone the revision of its last change, a
// deletion after its last write included, whether it joins before the load
// or after it: every replica of a zone publishes the same serial.
func TestLastChange(t *testing.T) {
	s := startEtcd(t)
	com := do(t, s, "put /skydns/com/example/app x")
	do(t, s, "put /skydns/org/example/app x", "put /skydns/org/example/old x")
	org := do(t, s, "del /skydns/org/example/old")
	do(t, s, "put /other/key x") // outside the tree
	early := &recorder{}
	tr := startTree(t, s)
	tr.Join("early", []string{"/skydns/com/example"}, []Follower{early})
	installed(t, early)
	late := []*recorder{{}, {}}
	tr.Join("late", []string{"/skydns/com/example", "/skydns/org/example"}, []Follower{late[0], late[1]})
	installed(t, late...)
	for _, c := range []struct {
		name string
		r    *recorder
		want int64
	}{{"example.com, before the load", early, com}, {"example.com, after it", late[0], com}, {"example.org, after it", late[1], org}} {
		lastChange(t, c.name, c.r, c.want)
	}
	// Later changes reach every group's zone.
	rev := do(t, s, "put /skydns/com/example/new x")
	poll.Until(t, 10*time.Second, "the new record", func() error {
		if early.state() != rev || late[0].state() != rev || !late[0].saw("new.example.com.") {
			return errors.New("not yet")
		}
		return nil
	})
	if late[1].saw("new.example.com.") {
		t.Error("example.org was told of a change of example.com")
	}
}

// TestLastChangeCompacted has a zone join after etcd compacted the
// revisions of its last deletion: its last change is taken to be the last
// compacted revision, never earlier.
func TestLastChangeCompacted(t *testing.T) {
	s := startEtcd(t)
	do(t, s, "put /skydns/org/example/app x", "put /skydns/org/example/old x")
	do(t, s, "del /skydns/org/example/old")
	compacted := do(t, s, "put /other/1 x", "put /other/2 x")
	if _, err := s.Client().Compact(context.Background(), compacted); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	startTree(t, s).Join("g", []string{"/skydns/org/example"}, []Follower{r})
	installed(t, r)
	lastChange(t, "the revision before the compaction's", r, compacted-1)
}

// lastChange waits until r's last change is at want, and fails if it
// passes it: the deletions before the load come after the install.
func lastChange(t *testing.T, what string, r *recorder, want int64) {
	t.Helper()
	poll.Until(t, 10*time.Second, fmt.Sprintf("%s: last change at %d", what, want), func() error {
		switch got := r.state(); {
		case got > want:
			t.Fatalf("%s: last change at %d, after %d", what, got, want)
		case got < want:
			return fmt.Errorf("at %d", got)
		}
		return nil
	})
}

// TestHolders gives each key to the deepest zone of each group: a group
// with lan.example.com beside example.com, and a group with example.com
// alone.
func TestHolders(t *testing.T) {
	subs := map[string][]*Sub{}
	for _, s := range []*Sub{
		{apex: "/skydns/com/example", group: "a"},
		{apex: "/skydns/com/example/lan", group: "a"},
		{apex: "/skydns/com/example", group: "b"},
	} {
		subs[s.apex] = append(subs[s.apex], s)
	}
	for key, want := range map[string]string{
		"/skydns/com/example":         "a /skydns/com/example, b /skydns/com/example",
		"/skydns/com/example/app/x1":  "a /skydns/com/example, b /skydns/com/example",
		"/skydns/com/example/lan":     "a /skydns/com/example/lan, b /skydns/com/example",
		"/skydns/com/example/lan/a/1": "a /skydns/com/example/lan, b /skydns/com/example",
		"/skydns/com/example/lane/x":  "a /skydns/com/example, b /skydns/com/example",
		"/skydns/com/example-shop/x":  "",
		"/skydns/com/exampl":          "",
	} {
		var got []string
		holders(subs, key, func(s *Sub) { got = append(got, fmt.Sprint(s.group, " ", s.apex)) })
		if strings.Join(got, ", ") != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
}

// TestUnreadable leaves a key that can't be read out of the index, and
// takes it out when it is written again with a good value.
func TestUnreadable(t *testing.T) {
	s := startEtcd(t)
	do(t, s, "put /skydns/com/example/app garbage")
	r := &recorder{}
	startTree(t, s).Join("g", []string{"/skydns/com/example"}, []Follower{r})
	installed(t, r)
	do(t, s, "put /skydns/com/example/app good")
	poll.Until(t, 10*time.Second, "the good value", func() error {
		if !r.saw("app.example.com.") {
			return errors.New("not yet")
		}
		return nil
	})
}

// TestWatchGoesOnFromTheLoad installs the zones after writes to other keys,
// has etcd compact its history up to the load, and starts the watch again,
// as run does after a failure (a lost leader, say): it goes on from the
// load's revision, so it neither takes the compaction for a change of the
// zone nor reads the tree again.
func TestWatchGoesOnFromTheLoad(t *testing.T) {
	var logs lockedbuf.Buffer
	stdlog.SetOutput(&logs)
	t.Cleanup(func() { stdlog.SetOutput(os.Stderr) })
	s := startEtcd(t)
	do(t, s, "put /skydns/com/example/app x")
	var rev int64
	for i := range 20 {
		rev = do(t, s, fmt.Sprintf("put /other/%d x", i))
	}
	r := &recorder{}
	ctx, stop := context.WithCancel(context.Background())
	tr := newTree(ctx, Config{Client: s.Client(), Path: "/skydns", Read: read, Stream: t.Name()})
	t.Cleanup(func() { stop(); tr.reading.Wait() })
	tr.Join("g", []string{"/skydns/com/example"}, []Follower{r})
	tr.serve()
	if err := tr.load(ctx); err != nil {
		t.Fatal(err)
	}
	// watch runs the watch until check passes.
	watch := func(what string, check func() error) {
		t.Helper()
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- tr.watch(ctx, func(string) {}) }()
		poll.Until(t, 10*time.Second, what, check)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the watch ended with %v", err)
		}
	}
	watch("the zone installed", func() error {
		if r.state() == 0 {
			return errors.New("not installed")
		}
		return nil
	})
	if _, err := s.Client().Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	do(t, s, "put /skydns/com/example/new x")
	watch("the new record", func() error {
		if !r.saw("new.example.com.") {
			return errors.New("no change of new.example.com")
		}
		return nil
	})
	if strings.Contains(logs.String(), "compacted") {
		t.Errorf("the watch asked for compacted revisions:\n%s", logs.String())
	}
}

// TestLeave calls a zone's follower no more once it left.
func TestLeave(t *testing.T) {
	s := startEtcd(t)
	do(t, s, "put /skydns/com/example/app x")
	tr := startTree(t, s)
	stays, leaves := &recorder{}, &recorder{}
	tr.Join("stays", []string{"/skydns/com/example"}, []Follower{stays})
	subs := tr.Join("leaves", []string{"/skydns/com/example"}, []Follower{leaves})
	installed(t, stays, leaves)
	subs[0].Leave()
	leaves.mu.Lock()
	calls := leaves.calls
	leaves.mu.Unlock()
	rev := do(t, s, "put /skydns/com/example/new x")
	poll.Until(t, 10*time.Second, "the new record", func() error {
		if stays.state() != rev {
			return errors.New("not yet")
		}
		return nil
	})
	leaves.mu.Lock()
	defer leaves.mu.Unlock()
	if leaves.calls != calls {
		t.Errorf("%d calls after Leave", leaves.calls-calls)
	}
}

// slowRecorder is a recorder whose builds take a while.
type slowRecorder struct{ recorder }

func (r *slowRecorder) Changed(changed map[string]bool, rev int64) {
	time.Sleep(2 * time.Millisecond)
	r.recorder.Changed(changed, rev)
}

// TestFlushPacing publishes a change, then has the next wait only after a
// build that took long (a large zone's, in a flood of writes), for no more
// than buildShare times the build's time.
func TestFlushPacing(t *testing.T) {
	fast := &Tree{}
	if !time.Now().After(fast.ready) {
		t.Fatal("the first change waits")
	}
	slow := &Tree{}
	for tr, f := range map[*Tree]Follower{fast: &recorder{}, slow: &slowRecorder{}} {
		tr.dirty = []*Sub{{f: f, changed: map[string]bool{"app.example.com.": true}}}
		start := time.Now()
		tr.flush()
		took := time.Since(start)
		if wait := time.Until(tr.ready); wait > buildShare*took {
			t.Errorf("the next change waits %s after a build of %s", wait, took)
		}
	}
	if wait := time.Until(slow.ready); wait <= 0 {
		t.Error("a change right after a slow build is not held back")
	}
}

// TestEachKeyUnder goes over the keys at and below apexes once each, an
// apex inside another one included, and none that merely begins like one.
func TestEachKeyUnder(t *testing.T) {
	tr := &Tree{keys: map[string]*entry{}}
	for _, key := range []string{"/skydns/com/example", "/skydns/com/example-shop/x", "/skydns/com/example/a/1", "/skydns/com/example/lan/b", "/skydns/com/example/lan", "/skydns/com/other/c", "/skydns/org/example/d"} {
		tr.keys[key] = &entry{}
	}
	var got []string
	tr.eachKeyUnder([]string{"/skydns/com/example/lan", "/skydns/org/example", "/skydns/com/example"}, func(key string, _ *entry) { got = append(got, key) })
	slices.Sort(got)
	if want := []string{"/skydns/com/example", "/skydns/com/example/a/1", "/skydns/com/example/lan", "/skydns/com/example/lan/b", "/skydns/org/example/d"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestInstallWait installs the zones that join while the history is read
// after installWait, once: a group that joins later is installed at once;
// a deletion read afterwards moves the last change of the zone that held
// its key.
func TestInstallWait(t *testing.T) {
	tr := newTree(context.Background(), Config{})
	tr.keys = map[string]*entry{"/skydns/com/example/app": {src: &zone.Source{Key: "/skydns/com/example/app", Owner: "app.example.com."}, mod: 5}}
	tr.next = 11
	tr.reads = 1 // a read of the history under way
	first, later := &recorder{}, &recorder{}
	tr.Join("first", []string{"/skydns/com/example"}, []Follower{first})
	tr.serve()
	if first.state() != 0 {
		t.Fatal("installed while the history is read, before installWait")
	}
	select {
	case <-tr.installBy:
		tr.waitedLong()
	case <-time.After(10 * time.Second):
		t.Fatal("no installWait")
	}
	if first.state() != 5 {
		t.Fatalf("after installWait: last change at %d, want 5", first.state())
	}
	tr.Join("later", []string{"/skydns/com/example"}, []Follower{later})
	tr.serve()
	if later.state() != 5 {
		t.Fatalf("a group that joined after installWait: last change at %d, want 5 at once", later.state())
	}
	tr.deleted(historyRead{deletions: []deletion{{"/skydns/com/example/old", 8}}, done: true})
	for _, r := range []*recorder{first, later} {
		if r.state() != 8 {
			t.Errorf("after the deletion read: last change at %d, want 8", r.state())
		}
	}
	if tr.reads != 0 || tr.waited {
		t.Errorf("reads %d, waited %v once the read is done", tr.reads, tr.waited)
	}
}

// TestReportsProgress tells the etcd releases whose progress reports wait
// for a watch to catch up (etcd-io/etcd#15220: fixed in 3.4.24, 3.5.8).
func TestReportsProgress(t *testing.T) {
	for version, want := range map[string]bool{
		"3.4.23": false, "3.4.24": true, "3.5.7": false, "3.5.8": true, "3.5.21": true,
		"3.6.0": true, "3.7.2": true, "3.3.27": false, "4.0.0": true, "3.6.0-rc.1": true, "": false,
	} {
		if got := reportsProgress(version); got != want {
			t.Errorf("%q: %v, want %v", version, got, want)
		}
	}
}
