// Package update applies RFC 2136 UPDATEs to a zone whose records a Store
// holds: it checks an UPDATE's form, the rules that let a TSIG key make its
// changes, and its prerequisites, and writes its changes all or nothing.
package update

import (
	"context"
	"errors"

	"github.com/miekg/dns"
)

// Store is where UPDATEs read and write a zone's records.
type Store interface {
	// Path returns the key of name: name's records are at keys below it.
	Path(name string) string
	// Read returns the entries of names, those at each name's key and
	// below it whose owner is the name, all read at one moment, and the
	// commit that writes after them.
	Read(ctx context.Context, names []string) ([]*Entry, Commit, error)
}

// Commit writes puts (those with Lease set with the UPDATE's lease) and
// deletes the keys deletes, all or nothing, if none of the names read
// changed since; ok is false when one did.
type Commit func(ctx context.Context, puts []*Entry, deletes []string) (ok bool, err error)

// attempts bounds how often an UPDATE is tried again when the names it
// read changed before it could write them.
const attempts = 3

// ErrChanged ends an UPDATE whose names kept changing while it was tried.
var ErrChanged = errors.New("the names changed meanwhile")

// Permitted returns, for each of u's changes, whether the rule that lets
// key make it gives it a lease; ok is false when no rule lets key make one
// of them, denied.
func (u *Update) Permitted(rules []Rule, key string) (lease []bool, denied string, ok bool) {
	lease = make([]bool, len(u.changes))
	for i, c := range u.changes {
		rule, ok := permitting(rules, key, u.zone, c.name, c.rrtype)
		if !ok {
			return nil, c.name + " " + dns.TypeToString[c.rrtype], false
		}
		lease[i] = rule.Lease
	}
	return lease, "", true
}

// Apply reads through s the names u reads or writes, checks u's
// prerequisites against them, and writes u's changes if none of those names
// changed since; it tries again when one did. lease[i] says whether
// u.changes[i] gets the lease. It returns the rcode of the answer, and the
// store's error.
func Apply(ctx context.Context, s Store, u *Update, lease []bool) (int, error) {
	for range attempts {
		rcode, ok, err := apply(ctx, s, u, lease)
		switch {
		case err != nil:
			return dns.RcodeServerFailure, err
		case ok:
			return rcode, nil
		}
	}
	return dns.RcodeServerFailure, ErrChanged
}

// apply is one attempt of Apply; ok is false when the names changed.
func apply(ctx context.Context, s Store, u *Update, lease []bool) (rcode int, ok bool, err error) {
	var read []string
	for _, p := range u.prereqs {
		read = append(read, p.name)
	}
	for _, c := range u.changes {
		read = append(read, c.name)
	}
	entries, commit, err := s.Read(ctx, read)
	if err != nil {
		return 0, false, err
	}
	n := &names{entries: entries}
	for _, p := range u.prereqs {
		if rcode := n.holds(p); rcode != dns.RcodeSuccess {
			return rcode, true, nil
		}
	}
	before := map[string]bool{}
	for _, e := range n.entries {
		before[e.Key] = true
	}
	for i, c := range u.changes {
		if rcode := n.change(c, s.Path(c.name), lease[i]); rcode != dns.RcodeSuccess {
			return rcode, true, nil
		}
	}
	puts, deletes := writes(n, before)
	if len(puts)+len(deletes) == 0 {
		return dns.RcodeSuccess, true, nil
	}
	ok, err = commit(ctx, puts, deletes)
	return dns.RcodeSuccess, ok, err
}

// writes returns what makes the keys of n's names what n holds now, given
// the keys before: the entries to put (those an UPDATE wrote) and the keys
// to delete.
func writes(n *names, before map[string]bool) (puts []*Entry, deletes []string) {
	now := map[string]bool{}
	for _, e := range n.entries {
		now[e.Key] = true
		if e.Value != nil {
			puts = append(puts, e)
		}
	}
	for key := range before {
		if !now[key] {
			deletes = append(deletes, key)
		}
	}
	return puts, deletes
}

// Changes says what each of u's changes does, for the log.
func (u *Update) Changes() []string {
	out := make([]string, len(u.changes))
	for i, c := range u.changes {
		data := ""
		if c.rr != nil && c.op != opDeleteRRset && c.op != opDeleteName {
			data = " " + c.rr.String()
		}
		out[i] = [...]string{"add", "delete RRset", "delete name", "delete"}[c.op] + " " + c.name + " " + dns.TypeToString[c.rrtype] + data
	}
	return out
}
