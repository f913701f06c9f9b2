package records

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// attempts is how often Apply reads the tree and writes a change set before
// it gives up: each time, another writer changed a name it writes between
// the two.
const attempts = 3

// Result is what Apply did: the keys it wrote and deleted, and the
// endpoints it left out.
type Result struct {
	Puts, Deletes int
	Refused       []Refusal
}

// Refusal is an endpoint the store can't hold, and why.
type Refusal struct {
	Endpoint *wire.Endpoint
	Reason   error
}

// target is one record's type and data.
type target struct{ typ, data string }

// Apply writes ch into the tree: each name it changes ends with the records
// the change set leaves it (what it holds, without the record sets ch
// deletes or updates, with those it updates to and creates), its other
// records untouched. An endpoint the store can't hold (Check) is left out
// whole, and reported. The writes go in transactions of at most MaxOps
// operations, whole names each, each applied only if no key of its names
// changed since the tree was read; when one is not, Apply reads the tree
// again and writes what is still to write, until an attempt writes nothing
// the third time. Each attempt computes the same
// end state from what it reads, so a change set that failed half way (etcd
// lost, the process stopped) is completed by its retry, and none is
// written twice.
func (s *Store) Apply(ctx context.Context, ch *wire.Changes) (Result, error) {
	var res Result
	wants, refused := s.changes(ch)
	res.Refused = refused
	if len(wants) == 0 {
		return res, nil
	}
	for stalled := 0; stalled < attempts; {
		rev, slots, err := s.read(ctx)
		if err != nil {
			return res, err
		}
		byName := map[string][]*slot{}
		for _, sl := range slots {
			byName[sl.name] = append(byName[sl.name], sl)
		}
		// In key order: a name's check covers the keys below its own, so
		// a name comes before those whose keys its check covers, and no
		// check meets the writes of this attempt.
		var names []*nameOps
		for _, name := range slices.SortedFunc(maps.Keys(wants), func(a, b string) int { return strings.Compare(s.keyOf(a), s.keyOf(b)) }) {
			n := s.layout(name, byName[name], wants[name].apply(byName[name]))
			if len(n.ops) > 0 {
				names = append(names, n)
			}
		}
		written := res.Puts + res.Deletes
		done, err := s.commit(ctx, rev, names, &res)
		if err != nil || done {
			return res, err
		}
		if res.Puts+res.Deletes == written {
			stalled++
		}
	}
	return res, errors.New("etcd's keys of the changed names changed under each of its attempts")
}

// change is what a change set does to one name: the types whose record
// sets it removes, the ownership texts it removes (each a record set of its
// own: isOwnership), and the records it then adds.
type change struct {
	removed      map[string]bool
	removedOwned map[string]bool
	added        map[target]attrs
}

// removes reports whether c removes the record t of the name.
func (c *change) removes(t target) bool {
	if t.typ == "TXT" && isOwnership(t.data) {
		return c.removedOwned[t.data]
	}
	return c.removed[t.typ]
}

// changes returns, by name, what ch does, with the endpoints it leaves out
// (Check).
func (s *Store) changes(ch *wire.Changes) (map[string]*change, []Refusal) {
	wants := map[string]*change{}
	var refused []Refusal
	at := func(name string) *change {
		c := wants[name]
		if c == nil {
			c = &change{removed: map[string]bool{}, removedOwned: map[string]bool{}, added: map[target]attrs{}}
			wants[name] = c
		}
		return c
	}
	// An update whose new record set is refused keeps its old one.
	kept := func(old []*wire.Endpoint) []*wire.Endpoint {
		var out []*wire.Endpoint
		for j, ep := range old {
			if j >= len(ch.UpdateNew) || s.Check(ch.UpdateNew[j]) == nil {
				out = append(out, ep)
			}
		}
		return out
	}
	for i, eps := range [][]*wire.Endpoint{ch.Delete, kept(ch.UpdateOld), ch.UpdateNew, ch.Create} {
		for _, ep := range eps {
			if err := s.Check(ep); err != nil {
				refused = append(refused, Refusal{ep, err})
				continue
			}
			c := at(ep.Name())
			if i < 2 {
				for _, data := range ep.Targets {
					if ep.RecordType == "TXT" && isOwnership(data) {
						c.removedOwned[data] = true
					} else {
						c.removed[ep.RecordType] = true
					}
				}
				continue
			}
			a := marked(ep)
			for _, data := range ep.Targets {
				c.added[target{ep.RecordType, data}] = a
			}
		}
	}
	return wants, refused
}

// apply returns the records a name holding slots holds after c.
func (c *change) apply(slots []*slot) map[target]attrs {
	out := map[target]attrs{}
	for _, sl := range slots {
		if host := (target{sl.hostType, sl.host}); sl.host != "" && !c.removes(host) {
			out[host] = sl.attrs
		}
		if text := (target{"TXT", sl.text}); sl.hasText && !c.removes(text) {
			out[text] = sl.attrs
		}
	}
	maps.Copy(out, c.added)
	return out
}

// nameOps are the writes that give one name its records.
type nameOps struct {
	name string
	ops  []clientv3.Op
}

// layout returns the writes that make name, whose keys are slots, hold
// want: a key whose records stay is kept (rewritten when its TTL or mark
// changes), a key whose records all go is deleted, and each record no key
// holds gets a key of its own; at a reverse name, the PTR record and a
// text share the name's own key, as the coredns provider writes them.
func (s *Store) layout(name string, slots []*slot, want map[target]attrs) *nameOps {
	held := map[target]bool{}
	keys := map[string]bool{}
	var after []*slot // the slots that stay, as they will be
	changed := map[string]bool{}
	for _, sl := range slots {
		keys[sl.key] = true
		next := *sl
		host, text := target{sl.hostType, sl.host}, target{"TXT", sl.text}
		hostAttrs, keepHost := want[host]
		keepHost = keepHost && sl.host != "" && !held[host]
		textAttrs, keepText := want[text]
		keepText = keepText && sl.hasText && !held[text]
		if keepHost && keepText && !hostAttrs.equal(textAttrs) {
			keepText = false // the text moves to a key of its own
		}
		if !keepHost {
			next.host, next.hostType = "", ""
		}
		if !keepText {
			next.text, next.hasText = "", false
		}
		if keepHost {
			next.attrs, held[host] = hostAttrs, true
		} else if keepText {
			next.attrs = textAttrs
		}
		if keepText {
			held[text] = true
		}
		changed[sl.key] = keepHost != (sl.host != "") || keepText != sl.hasText || !next.attrs.equal(sl.attrs)
		if keepHost || keepText {
			after = append(after, &next)
		}
	}
	for _, t := range slices.SortedFunc(func(yield func(target) bool) {
		for t := range want {
			if !held[t] && !yield(t) {
				return
			}
		}
	}, func(a, b target) int { return cmp.Or(cmp.Compare(a.typ, b.typ), cmp.Compare(a.data, b.data)) }) {
		var sl *slot
		if isReverse(name) {
			sl = s.ownKey(name, &after, t, want[t])
		}
		if sl == nil {
			sl = &slot{key: s.newKey(name, keys), name: name, strip: 1, attrs: want[t]}
			keys[sl.key] = true
			after = append(after, sl)
		}
		if t.typ == "TXT" {
			sl.text, sl.hasText = t.data, true
			if sl.host == "" {
				sl.attrs = want[t]
			}
		} else {
			sl.host, sl.hostType, sl.attrs = t.data, t.typ, want[t]
		}
		changed[sl.key] = true
	}
	n := &nameOps{name: name}
	stays := map[string]bool{}
	for _, sl := range after {
		stays[sl.key] = true
		if changed[sl.key] {
			n.ops = append(n.ops, clientv3.OpPut(sl.key, string(sl.value())))
		}
	}
	for _, sl := range slots {
		if !stays[sl.key] {
			n.ops = append(n.ops, clientv3.OpDelete(sl.key))
		}
	}
	return n
}

// ownKey returns the slot of reverse name's own key to hold t, made and
// added to after if the name has none; nil when that key already holds a
// record of t's kind (a host, or a text), or one with another TTL or mark
// than t's, a: t then gets a key of its own.
func (s *Store) ownKey(name string, after *[]*slot, t target, a attrs) *slot {
	key := s.keyOf(name)
	i := slices.IndexFunc(*after, func(sl *slot) bool { return sl.key == key })
	if i < 0 {
		sl := &slot{key: key, name: name}
		*after = append(*after, sl)
		return sl
	}
	sl := (*after)[i]
	if (t.typ == "TXT" && sl.hasText) || (t.typ != "TXT" && sl.host != "") || !sl.attrs.equal(a) {
		return nil
	}
	return sl
}

// newKey returns a key for a record of name: a random label of 8
// hexadecimal digits below the name's own key, as the coredns provider
// draws them, none of keys.
func (s *Store) newKey(name string, keys map[string]bool) string {
	for {
		k := fmt.Sprintf("%s/%08x", s.keyOf(name), rand.Uint32())
		if !keys[k] {
			return k
		}
	}
}

// commit writes names's ops in transactions of at most MaxOps operations,
// each only if none of the keys of the names it writes changed after rev.
// A name with more operations than that is written alone, in parts, each
// checked against the revision of the part before. done is false when a
// check did not hold: the writes after it are not made.
func (s *Store) commit(ctx context.Context, rev int64, names []*nameOps, res *Result) (done bool, err error) {
	limit := max(s.MaxOps, 1)
	for len(names) > 0 {
		var cmps []clientv3.Cmp
		var ops []clientv3.Op
		i := 0
		for ; i < len(names) && len(cmps) < limit; i++ {
			if i > 0 && len(ops)+len(names[i].ops) > limit {
				break
			}
			cmps = append(cmps, s.unchanged(names[i].name, rev))
			ops = append(ops, names[i].ops...)
		}
		at := rev
		for len(ops) > 0 {
			part := ops[:min(limit, len(ops))]
			resp, err := s.KV.Txn(ctx).If(cmps...).Then(part...).Commit()
			if err != nil {
				return false, err
			}
			if !resp.Succeeded {
				return false, nil
			}
			for _, op := range part {
				if op.IsPut() {
					res.Puts++
				} else {
					res.Deletes++
				}
			}
			ops, at = ops[len(part):], resp.Header.Revision
			cmps = []clientv3.Cmp{s.unchanged(names[0].name, at)} // one name alone
		}
		names = names[i:]
	}
	return true, nil
}

// unchanged is the check that no key of name changed after rev: the name's
// own key and those below it (names below it too, which only makes a
// retry).
func (s *Store) unchanged(name string, rev int64) clientv3.Cmp {
	key := s.keyOf(name)
	return clientv3.Compare(clientv3.ModRevision(key).WithRange(key+"0"), "<", rev+1)
}
