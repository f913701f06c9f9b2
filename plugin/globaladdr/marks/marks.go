// Package marks follows the exposure marks (horizon.Mark) that external-dns's
// webhook intake stores in the values of an etcd tree, for the names of a
// server block that CoreDNS's etcd plugin answers rather than etcdzone: the
// etcd plugin answers from the same tree but carries no mark in its
// answers, so the view reads them from the tree itself. The etcd plugin answers a name
// with the records of every key at and below it (coredns/coredns#3861):
// the mark of a name is therefore the join of the marks of all those keys
// (horizon.Join), so that one key marked "false" withholds every answer its
// records could be part of.
package marks

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin/etcd/msg"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
)

// Marks holds the marks of the keys of one etcd tree's zones, by the names
// the etcd plugin answers them at. It is safe for concurrent use: one
// goroutine (Follow's) writes, queries read.
type Marks struct {
	// root is the tree's path with its trailing slash ("/skydns/").
	root string
	// zones are the paths of the zones' subtrees, with their trailing
	// slashes ("/skydns/org/example/"), none below another: the keys the
	// etcd plugin reads, and all an etcd user that may read only its
	// zones may read.
	zones []string

	mu sync.RWMutex
	// keys holds each key's name and mark.
	keys map[string]keyMark
	// below counts, for every name, the marks of the keys at and below it.
	below map[string]*tally
	// loaded is set once the tree was read whole; read is closed then.
	loaded bool
	read   chan struct{}
	// changed is closed, and made anew, at each change of the keys.
	changed chan struct{}
}

// keyMark is where one key stands and how it is marked.
type keyMark struct {
	name string
	mark horizon.Mark
}

// tally counts keys by mark.
type tally [3]int32

// join returns the join of the marks counted.
func (t *tally) join() horizon.Mark {
	switch {
	case t[horizon.Withheld] > 0:
		return horizon.Withheld
	case t[horizon.Unmarked] > 0:
		return horizon.Unmarked
	}
	return horizon.Exposed
}

// New returns the marks of the zones (FQDNs) of the tree at path
// ("/skydns"), empty and not loaded: Follow fills them.
func New(path string, zones []string) *Marks {
	root := strings.TrimSuffix(path, "/") + "/"
	var paths []string
	for _, z := range zones {
		paths = append(paths, strings.TrimSuffix(msg.Path(strings.ToLower(z), root), "/")+"/")
	}
	slices.Sort(paths) // a subtree sorts before those below it
	var subtrees []string
	for _, p := range paths {
		if len(subtrees) == 0 || !strings.HasPrefix(p, subtrees[len(subtrees)-1]) {
			subtrees = append(subtrees, p)
		}
	}
	return &Marks{root: root, zones: subtrees, keys: map[string]keyMark{}, below: map[string]*tally{}, read: make(chan struct{}), changed: make(chan struct{})}
}

// Read returns a channel closed once the tree was read whole.
func (m *Marks) Read() <-chan struct{} { return m.read }

// Loaded reports whether the tree was read whole: until then no mark is
// known, and the view answers nothing of the tree.
func (m *Marks) Loaded() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.loaded
}

// Of returns the mark of the records the etcd plugin answers name (a
// lower-case FQDN) with: the join of the marks of the keys at and below it.
// A wildcard label (* or any, which the etcd plugin matches against any
// label) stands for every name below the labels to its right. ok is false
// when no key is at or below name, or the tree is not loaded yet.
func (m *Marks) Of(name string) (mark horizon.Mark, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.of(belowWildcard(name))
}

// of is Of of a name below any wildcard; m.mu is held.
func (m *Marks) of(name string) (mark horizon.Mark, ok bool) {
	t, ok := m.below[name]
	if !ok || !m.loaded {
		return horizon.Withheld, false
	}
	return t.join(), true
}

// Await is Of once a key is at or below name, waiting for one for at most
// d: the etcd plugin reads etcd as it answers, and the watch brings the
// key it has just answered from a moment later.
func (m *Marks) Await(name string, d time.Duration) (mark horizon.Mark, ok bool) {
	name = belowWildcard(name)
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		m.mu.RLock()
		mark, ok = m.of(name)
		changed := m.changed
		m.mu.RUnlock()
		if ok {
			return mark, true
		}
		select {
		case <-changed:
		case <-timeout.C:
			return mark, false
		}
	}
}

// tell tells the waiters of Await that the keys changed; m.mu is held.
func (m *Marks) tell() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// belowWildcard returns name without its labels up to the rightmost
// wildcard label, if it has one.
func belowWildcard(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if i > 0 && name[i-1] != '.' {
			continue
		}
		label, _, _ := strings.Cut(name[i:], ".")
		if label == "*" || label == "any" {
			if rest := name[i+len(label)+1:]; rest != "" {
				return rest
			}
			return "."
		}
	}
	return name
}

// Set makes values (each key's value) the tree's, read whole: Follow sets
// what it reads.
func (m *Marks) Set(values map[string][]byte) {
	keys, below := make(map[string]keyMark, len(values)), make(map[string]*tally, len(values))
	for key, value := range values {
		if km, ok := m.parse(key, value); ok {
			keys[key] = km
			count(below, km, 1)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys, m.below = keys, below
	m.tell()
	if !m.loaded {
		m.loaded = true
		close(m.read)
	}
}

// put records the value of key, written.
func (m *Marks) put(key string, value []byte) {
	km, ok := m.parse(key, value)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(key)
	if ok {
		m.keys[key] = km
		count(m.below, km, 1)
	}
	m.tell()
}

// remove records that key was deleted.
func (m *Marks) remove(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(key)
	m.tell()
}

// forget removes key's mark from the counts. m.mu is held.
func (m *Marks) forget(key string) {
	if old, ok := m.keys[key]; ok {
		delete(m.keys, key)
		count(m.below, old, -1)
	}
}

// count adds d to the count of km's mark at its name and every name above.
func count(below map[string]*tally, km keyMark, d int32) {
	for name := km.name; ; {
		t := below[name]
		if t == nil {
			t = new(tally)
			below[name] = t
		}
		t[km.mark] += d
		if t[0]+t[1]+t[2] == 0 {
			delete(below, name)
		}
		if name == "." {
			return
		}
		_, rest, _ := strings.Cut(name, ".")
		if name = rest; name == "" {
			name = "."
		}
	}
}

// parse returns the name and mark of key, holding value; ok is false for a
// key outside the zones. A value that is not a JSON object, whose mark is
// neither "true" nor "false", or whose route is not "address" (a view in
// front of the etcd plugin has no tunnel), is withheld (fail closed).
func (m *Marks) parse(key string, value []byte) (km keyMark, ok bool) {
	if !slices.ContainsFunc(m.zones, func(z string) bool { return strings.HasPrefix(key, z) }) {
		return keyMark{}, false
	}
	rest := strings.TrimPrefix(key, m.root)
	km.name = nameOf(rest)
	var v struct {
		Mark  *string `json:"globaladdr-external"`
		Route *string `json:"globaladdr-target"`
	}
	switch err := json.Unmarshal(value, &v); {
	case err != nil:
		km.mark = horizon.Withheld
		log.Debugf("%s is withheld from the external view: its value can't be read: %v", key, err)
	case v.Route != nil && *v.Route != "address":
		km.mark = horizon.Withheld
		log.Debugf("%s is withheld from the external view: its route %q names no target of a view without a tunnel", key, *v.Route)
	case v.Mark != nil:
		var valid bool
		if km.mark, valid = horizon.ParseMark(*v.Mark); !valid {
			log.Debugf("%s is withheld from the external view: its mark %q is neither \"true\" nor \"false\"", key, *v.Mark)
		}
	}
	return km, true
}

// nameOf returns the lower-case FQDN of the key path below the tree's
// prefix ("com/example/www": "www.example.com."), as the etcd plugin reads
// it.
func nameOf(path string) string {
	labels := strings.Split(strings.Trim(path, "/"), "/")
	var b strings.Builder
	for i := len(labels) - 1; i >= 0; i-- {
		if labels[i] == "" {
			continue
		}
		b.WriteString(strings.ToLower(labels[i]))
		b.WriteByte('.')
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}
