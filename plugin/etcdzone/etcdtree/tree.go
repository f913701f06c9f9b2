// Package etcdtree follows an etcd tree (every key under the etcd plugin's
// path) for the zones of a process: it loads the keys at one revision, page
// by page, parses each key's value once, keeps them current with one watch,
// and loads them again when etcd compacted what the watch missed. Each zone
// joins the tree with its apex; the tree hands each zone its keys in an
// index of its own (whose records are the tree's, shared), the changes to
// them, and the revision of the zone's last change (deletions included), of
// which the zone's serial is made (deletions before the load come from
// etcd's history, read in the background). A zone that joins a loaded tree
// gets its keys from what the tree holds, with no load and no watch of its
// own.
package etcdtree

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// retry is how long the loading or the watch of the tree waits before
	// it starts again after a failure.
	retry = time.Second
	// buildShare paces the builds of the zones from the changes of watch
	// responses: after builds that took d, the next wait until d times
	// buildShare has passed since their start, so that builds take at
	// most 1/buildShare of the time. A change is published at once unless
	// a build just ran (external-dns's second key of a host comes within a
	// millisecond of its first, and a small zone's build takes less); the
	// changes of a flood of writes are taken together while they wait.
	buildShare = 5
)

var log = clog.NewWithPlugin("etcdzone")

// errStale ends a watch that can no longer bring the tree up to date: etcd
// compacted the revisions it had not seen yet.
var errStale = errors.New("the revisions after the tree's were compacted")

// Follower is a zone that the tree's keys feed.
type Follower interface {
	// NewIndex returns the zone's index before any key is placed in it:
	// the records the Corefile adds.
	NewIndex() *zone.Index
	// Accept reports whether the zone serves src, the records of key, one
	// of its keys, as the tree read them (nil, and err says why, when the
	// key holds none); it logs and counts what it refuses.
	Accept(key string, src *zone.Source, err error) bool
	// Install makes idx, the zone's keys at one revision of etcd, the
	// zone's, whose last change etcd holds was at revision written.
	Install(idx *zone.Index, written int64)
	// Changed publishes the changes of the owner names in changed, made
	// to the installed index, the last at revision rev.
	Changed(changed map[string]bool, rev int64)
	// Rejudge builds the zone again, after its view changed.
	Rejudge()
	// Failed counts a failed read or watch of the tree.
	Failed()
}

// Config says which tree to follow, and how to report it.
type Config struct {
	Client *clientv3.Client
	// Where names etcd (its endpoints) in the log; Explain, when not
	// nil, gives a failure its cause in words.
	Where   string
	Explain func(error) error
	// Path is the tree's etcd key ("/skydns"): its keys are below it.
	Path string
	// Read returns the records the value of kv, a put of key, holds, at
	// their owner name, or why it holds none. The tree reads each value
	// once, for every zone that holds the key.
	Read func(key string, kv *mvccpb.KeyValue) (*zone.Source, error)
	// Stream names the tree's gRPC watch streams (etcd's client shares
	// one among the watches of the same name): etcd reports progress on
	// a stream only once every watch on it has caught up, and other
	// watches (globaladdr's from etcd) must not hold that back.
	Stream string
}

// Tree follows one etcd tree for the zones that join it. Its keys, the
// zones' indexes and their changes belong to one goroutine (run); other
// goroutines reach it through Join, Leave and Rejudge.
type Tree struct {
	c Config
	// ctx ends when the tree stops; done is closed once run returned,
	// reading holds the reads of the history under way.
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	reading sync.WaitGroup
	// historyReads brings the parts of the history read to run.
	historyReads chan historyRead

	// kick holds a signal while zones wait to join or leave, or to be
	// judged again.
	kick chan struct{}
	mu   sync.Mutex
	// joining and leaving are the zones that wait to join or leave,
	// rejudging those that wait to be judged again.
	joining, leaving, rejudging []*Sub

	// Owned by run:
	// subs are the zones that joined, by their apex key.
	subs map[string][]*Sub
	// keys are the tree's keys, as read; nil until loaded. sorted holds
	// them in order, nil until a zone joins, and when keys came or went
	// since.
	keys   map[string]*entry
	sorted []string
	// history holds the deletions of keys (see history).
	history history
	// next is the revision the watch goes on from.
	next int64
	// reads counts the reads of the history under way; waiting are the
	// zones placed that wait for them to be installed, until installBy;
	// waited is set once zones waited installWait while the reads go on
	// (see place).
	reads     int
	waiting   []*Sub
	installBy <-chan time.Time
	waited    bool
	// noProgress is set while etcd's progress reports can't be relied on
	// (see checkProgress); toldNoProgress once that was logged.
	noProgress, toldNoProgress bool
	// dirty are the zones with changes waiting to be published; builds
	// may come at ready (see buildShare).
	dirty []*Sub
	ready time.Time
}

// entry is one of the tree's keys: its records, read once, or why it holds
// none; and the revision it was last written at.
type entry struct {
	src *zone.Source
	err error
	mod int64
}

// New starts following c's tree until Stop.
func New(c Config) *Tree {
	ctx, cancel := context.WithCancel(context.Background())
	t := newTree(ctx, c)
	t.cancel = cancel
	go func() { defer close(t.done); t.run(ctx) }()
	return t
}

// newTree returns the tree of c, to follow until ctx ends.
func newTree(ctx context.Context, c Config) *Tree {
	t := &Tree{c: c, ctx: ctx, done: make(chan struct{}), historyReads: make(chan historyRead), kick: make(chan struct{}, 1), subs: map[string][]*Sub{}}
	t.history.reset(0)
	return t
}

// Stop stops following the tree, and returns once it has.
func (t *Tree) Stop() {
	t.Cancel()
	t.Wait()
}

// Cancel has the tree stop following etcd; Wait returns once it has. A
// request to etcd under way (the etcd plugin's lease look-ups have no
// deadline) ends when the client is closed between the two.
func (t *Tree) Cancel() { t.cancel() }

// Wait returns once the tree stopped, after Cancel.
func (t *Tree) Wait() {
	<-t.done
	t.reading.Wait()
}

// run keeps the tree up to date until ctx ends: it loads it, then applies
// what one watch delivers. It loads it again when the watch can't catch up
// (etcd compacted what it missed). While etcd fails, the zones keep what
// they held, and the failure is logged once.
func (t *Tree) run(ctx context.Context) {
	var failed string // the failure last logged; "" while etcd answers
	fail := func(what string, err error) {
		if ctx.Err() != nil {
			return
		}
		for _, s := range t.all() {
			s.call(s.f.Failed)
		}
		if err.Error() != failed {
			failed = err.Error()
			if t.c.Explain != nil {
				err = t.c.Explain(err)
			}
			log.Warningf("%s: %s etcd at %s: %v", t.c.Path, what, t.c.Where, err)
		}
	}
	answered := func(what string) {
		if failed != "" {
			log.Infof("%s: %s etcd again", t.c.Path, what)
			failed = ""
		}
	}
	for delay := time.Duration(0); t.pause(ctx, delay); {
		delay = retry
		if err := t.load(ctx); err != nil {
			fail("reading", err)
			continue
		}
		answered("reading")
		err := t.watch(ctx, answered)
		for ; err != nil && !errors.Is(err, errStale); err = t.watch(ctx, answered) {
			fail("watching", err)
			if !t.pause(ctx, retry) {
				return
			}
		}
		if err != nil {
			log.Infof("%s: %v; reading it again", t.c.Path, err)
		}
		delay = 0
	}
}

// pause waits d, or until ctx ends (false), meanwhile serving the zones
// that join, leave or wait to be judged again: a change of a view and a
// refresh of signatures need no etcd, so they go on from what the zones
// hold while etcd is away.
func (t *Tree) pause(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-t.kick:
			t.serve()
		case read := <-t.historyReads:
			t.deleted(read)
		case <-t.installBy:
			t.waitedLong()
		}
	}
}

// prefix is what the tree's keys begin with: its path and a slash ("/"
// for the path "/").
func (t *Tree) prefix() string { return strings.TrimSuffix(t.c.Path, "/") + "/" }

// all returns the zones that joined.
func (t *Tree) all() []*Sub {
	var subs []*Sub
	for _, at := range t.subs {
		subs = append(subs, at...)
	}
	return subs
}
