package etcdtree

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Sub is a zone's share of a tree: the keys at and below its apex key,
// but for those of the zones inside it of the same group (a server block's
// zones are a group: each key is the deepest zone's of the group).
type Sub struct {
	t     *Tree
	apex  string
	group any
	f     Follower

	// rejudge is set while the zone waits to be judged again.
	rejudge atomic.Bool
	// mu is held while the tree installs, changes or judges f's zone, gone
	// set once the zone left: none comes after Leave.
	mu   sync.Mutex
	gone bool

	// Owned by the tree's goroutine: the zone's index, nil until placed;
	// whether it is installed (see Tree.place); the revision of its last
	// change; and the changes that wait to be published, nil when none.
	idx       *zone.Index
	installed bool
	written   int64
	changed   map[string]bool
	rev       int64
}

// Join has the zones with the apex keys in apexes (each the etcd key of a
// zone's apex, "/skydns/com/example"), all of one group, follow the tree:
// each is given its keys (Follower.Install) once the tree is loaded, from
// what the tree holds if it is (see place). The zones of a group join
// together.
func (t *Tree) Join(group any, apexes []string, fs []Follower) []*Sub {
	subs := make([]*Sub, len(apexes))
	for i, apex := range apexes {
		subs[i] = &Sub{t: t, apex: strings.TrimSuffix(apex, "/"), group: group, f: fs[i]}
	}
	t.mu.Lock()
	t.joining = append(t.joining, subs...)
	t.mu.Unlock()
	wait.Signal(t.kick)
	return subs
}

// Leave ends s's share of the tree: once it returns, s's follower is
// installed, changed and judged no more (a key being placed may still be
// offered to Accept).
func (s *Sub) Leave() {
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
	s.t.mu.Lock()
	s.t.leaving = append(s.t.leaving, s)
	s.t.mu.Unlock()
	wait.Signal(s.t.kick)
}

// Rejudge has s's follower's Rejudge called, on the tree's goroutine,
// after the changes that wait.
func (s *Sub) Rejudge() {
	if !s.rejudge.Swap(true) {
		s.t.mu.Lock()
		s.t.rejudging = append(s.t.rejudging, s)
		s.t.mu.Unlock()
	}
	wait.Signal(s.t.kick)
}

// call calls f unless s left.
func (s *Sub) call(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.gone {
		f()
	}
}

// serve takes the zones that wait to leave, join or be judged again. Zones
// that join a loaded tree are placed at once.
func (t *Tree) serve() {
	t.mu.Lock()
	joining, leaving, rejudging := t.joining, t.leaving, t.rejudging
	t.joining, t.leaving, t.rejudging = nil, nil, nil
	t.mu.Unlock()
	// A zone may join and leave in one go (its block stopped while the
	// tree was loading): it joins first.
	for _, s := range joining {
		t.subs[s.apex] = append(t.subs[s.apex], s)
	}
	for _, s := range leaving {
		t.subs[s.apex] = slices.DeleteFunc(t.subs[s.apex], func(o *Sub) bool { return o == s })
		if len(t.subs[s.apex]) == 0 {
			delete(t.subs, s.apex)
		}
	}
	joining = slices.DeleteFunc(joining, func(s *Sub) bool { return slices.Contains(leaving, s) })
	if t.keys != nil && len(joining) > 0 {
		t.place(joining)
	}
	if len(rejudging) > 0 {
		t.flush()
	}
	for _, s := range rejudging {
		// A zone not installed yet is judged when it is (see
		// installWaiting).
		if s.installed && s.rejudge.Swap(false) {
			s.call(s.f.Rejudge)
		}
	}
}

// place gives each of subs its keys from the tree, in a new index, and
// the revision of its last change as far as the tree knows it. The
// deletions the tree does not know yet (those before its load, or before
// the keys of a zone that joins later were last written) are read from
// etcd's history (see history): the zones are installed once every read
// is done, or after installWait with what the reads found so far; the
// deletions still to come then move their last change.
func (t *Tree) place(subs []*Sub) {
	byApex := map[string][]*Sub{}
	for _, s := range subs {
		s.idx, s.installed, s.written, s.changed, s.rev = s.f.NewIndex(), false, 0, nil, 0
		byApex[s.apex] = append(byApex[s.apex], s)
	}
	t.eachKeyUnder(slices.Collect(maps.Keys(byApex)), func(key string, e *entry) {
		holders(byApex, key, func(s *Sub) {
			s.written = max(s.written, e.mod)
			if s.f.Accept(key, e.src, e.err) {
				s.idx.Put(nil, e.src, nil)
			}
		})
	})
	from := t.next
	for _, s := range subs {
		from = min(from, s.written+1)
	}
	t.history.reach(t, from)
	for key, rev := range t.history.deleted {
		holders(byApex, key, func(s *Sub) { s.written = max(s.written, rev) })
	}
	for _, s := range subs {
		s.written = max(s.written, t.history.floor)
	}
	t.waiting = append(t.waiting, subs...)
	switch {
	case t.reads == 0 || t.waited:
		t.installWaiting()
	case t.installBy == nil:
		t.installBy = time.After(installWait)
	}
}

// installWait bounds how long zones wait for the reads of the history
// before they are installed, once for all the zones that join while the
// reads go on (CoreDNS starts its server blocks one after the other): etcd
// sends a watch that far behind about 10,000 revisions a second, and the
// zones must answer before a long history (an etcd never compacted) is
// read.
const installWait = 250 * time.Millisecond

// installWaiting installs the zones that wait to be, and judges again
// those that asked meanwhile (a signed zone's refresh).
func (t *Tree) installWaiting() {
	for _, s := range t.waiting {
		s.installed = true
		s.call(func() { s.f.Install(s.idx, s.written) })
		if s.rejudge.Swap(false) {
			s.call(s.f.Rejudge)
		}
	}
	t.waiting, t.installBy = nil, nil
}

// waitedLong installs the zones that wait, after installWait: the zones
// that join while the reads go on are installed at once.
func (t *Tree) waitedLong() {
	t.waited = true
	t.installWaiting()
}

// eachKeyUnder calls f for each of the tree's keys at or below one of
// apexes, once.
func (t *Tree) eachKeyUnder(apexes []string, f func(key string, e *entry)) {
	if t.sorted == nil {
		t.sorted = slices.Sorted(maps.Keys(t.keys))
	}
	// The keys below an apex below another one are that one's too.
	set := map[string]bool{}
	for _, apex := range apexes {
		set[apex] = true
	}
	apexes = slices.DeleteFunc(apexes, func(apex string) bool {
		for p := apex; ; {
			i := strings.LastIndexByte(p, '/')
			if i <= 0 {
				return false
			}
			if p = p[:i]; set[p] {
				return true
			}
		}
	})
	for _, apex := range apexes {
		if e := t.keys[apex]; e != nil {
			f(apex, e)
		}
		// The keys below apex follow one another: those that begin
		// like it ("/a-b" before "/a/") do not come between.
		i, _ := slices.BinarySearch(t.sorted, apex+"/")
		for ; i < len(t.sorted) && strings.HasPrefix(t.sorted[i], apex+"/"); i++ {
			f(t.sorted[i], t.keys[t.sorted[i]])
		}
	}
}

// holders calls f for each zone of subs (by apex key) that holds key: of
// each group, the zone whose apex is key or the nearest above it.
func holders(subs map[string][]*Sub, key string, f func(*Sub)) {
	var seen [4]any
	groups := seen[:0]
	for p := key; ; {
		for _, s := range subs[p] {
			if !slices.Contains(groups, s.group) {
				groups = append(groups, s.group)
				f(s)
			}
		}
		i := strings.LastIndexByte(p, '/')
		if i <= 0 {
			return
		}
		p = p[:i]
	}
}

// Unchanged reports whether etcd changed none of the keys at or below apex
// (a zone's apex key) after the revision the tree has applied, up to
// revision rev: a zone published at rev then holds what any replica that
// read etcd at rev holds. It asks etcd unless the tree has applied rev
// already. Call it from a Follower's method, on the tree's goroutine.
func (t *Tree) Unchanged(ctx context.Context, apex string, rev int64) (bool, error) {
	if rev < t.next {
		return true, nil
	}
	apex = strings.TrimSuffix(apex, "/")
	held := int64(0)
	t.eachKeyUnder([]string{apex}, func(string, *entry) { held++ })
	at, below := clientv3.WithRev(rev), []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithRev(rev)}
	since := clientv3.WithMinModRev(t.next)
	resp, err := t.c.Client.Txn(ctx).Then(
		clientv3.OpGet(apex, at, since, clientv3.WithKeysOnly()),
		clientv3.OpGet(apex+"/", append(below, since, clientv3.WithKeysOnly(), clientv3.WithLimit(1))...),
		clientv3.OpGet(apex, at, clientv3.WithCountOnly()),
		clientv3.OpGet(apex+"/", append(below, clientv3.WithCountOnly())...),
	).Commit()
	if err != nil {
		return false, err
	}
	r := resp.Responses
	written := len(r[0].GetResponseRange().Kvs) + len(r[1].GetResponseRange().Kvs)
	count := r[2].GetResponseRange().Count + r[3].GetResponseRange().Count
	return written == 0 && count == held, nil
}
