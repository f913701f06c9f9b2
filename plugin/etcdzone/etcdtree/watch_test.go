package etcdtree

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/poll"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// recorder is a Follower that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	idx     *zone.Index
	changed map[string]bool
}

func (r *recorder) NewIndex() *zone.Index { return zone.NewIndex(nil) }

func (r *recorder) Read(kv *mvccpb.KeyValue, deleted bool) zone.Source {
	owner := strings.TrimPrefix(string(kv.Key), "/skydns/com/example/")
	owner = owner[:strings.IndexByte(owner, '/')] + ".example.com."
	if deleted {
		return zone.Source{Key: string(kv.Key)}
	}
	return zone.Source{Key: string(kv.Key), Owner: owner, RRs: []dns.RR{&dns.TXT{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{string(kv.Value)}}}}
}

func (r *recorder) Install(idx *zone.Index, _ int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idx = idx
}

func (r *recorder) Changed(changed map[string]bool, _ int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = map[string]bool{}
	}
	for name := range changed {
		r.changed[name] = true
	}
}

func (r *recorder) Rejudge() {}

func (r *recorder) installed() *zone.Index {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idx
}

func (r *recorder) saw(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed[name]
}

// TestWatchGoesOnFromTheLoad loads the zone after writes to other keys, lets
// a watch install it, has etcd compact its history up to the load, and
// starts the watch again, as Follow does after a failure (a lost leader,
// say): it goes on from the load's revision, so it neither takes the
// compaction for a change of the zone nor reads the zone again.
func TestWatchGoesOnFromTheLoad(t *testing.T) {
	var logs lockedbuf.Buffer
	stdlog.SetOutput(&logs)
	t.Cleanup(func() { stdlog.SetOutput(os.Stderr) })
	s, err := etcdtest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()
	if _, err := s.Client().Put(ctx, "/skydns/com/example/app/1", `{"host":"192.168.0.51"}`); err != nil {
		t.Fatal(err)
	}
	var rev int64
	for i := range 20 {
		resp, err := s.Client().Put(ctx, fmt.Sprintf("/other/%d", i), "x")
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	f := &recorder{}
	tr := &tree{c: Config{Client: s.Client(), Keys: Keys{Key: "/skydns/com/example"}, Name: "example.com.", Stream: t.Name(), Errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "errors"})}, f: f}
	d, loaded, written, err := tr.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := &watch{t: tr, next: written + 1, loaded: loaded, pending: d, written: written}
	// run runs the watch until check passes.
	run := func(what string, check func() error) {
		t.Helper()
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); var failed string; w.run(ctx, &failed) }()
		poll.Until(t, 10*time.Second, what, check)
		cancel()
		<-done
	}
	run("the zone installed", func() error {
		if f.installed() == nil {
			return errors.New("not loaded")
		}
		return nil
	})
	if _, err := s.Client().Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client().Put(ctx, "/skydns/com/example/new/1", `{"host":"192.168.0.99"}`); err != nil {
		t.Fatal(err)
	}
	run("the new record", func() error {
		if !f.saw("new.example.com.") {
			return errors.New("no change of new.example.com")
		}
		return nil
	})
	if strings.Contains(logs.String(), "compacted") {
		t.Errorf("the watch asked for compacted revisions:\n%s", logs.String())
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
	w := &watch{t: &tree{f: &recorder{}}}
	if !time.Now().After(w.ready) {
		t.Fatal("the first change waits")
	}
	slow := &watch{t: &tree{f: &slowRecorder{}}}
	for _, w := range []*watch{w, slow} {
		w.dirty = map[string]bool{"app.example.com.": true}
		start := time.Now()
		w.flush()
		took := time.Since(start)
		if wait := time.Until(w.ready); wait > buildShare*took {
			t.Errorf("the next change waits %s after a build of %s", wait, took)
		}
	}
	if wait := time.Until(slow.ready); wait <= 0 {
		t.Error("a change right after a slow build is not held back")
	}
}
