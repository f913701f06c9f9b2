package etcdzone

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/tsig"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// updateAttempts bounds how often an UPDATE is tried again when the names it
// read changed before it could write them.
const updateAttempts = 3

// errChanged ends an attempt whose names changed in etcd meanwhile.
var errChanged = errors.New("the names changed meanwhile")

// serveUpdate answers r, an RFC 2136 UPDATE for zone z, and writes its
// changes into etcd, all or nothing, when the block's rules let the TSIG key
// it was signed with make them (the tsig plugin checked the signature) and
// its prerequisites hold.
func (x *EtcdZone) serveUpdate(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, z *zone) (int, error) {
	rcode, result := x.update(ctx, r, z)
	updates.WithLabelValues(z.server, z.name, result).Inc()
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// update checks and applies r, and returns the rcode of the answer and the
// result the metric counts.
func (x *EtcdZone) update(ctx context.Context, r *dns.Msg, z *zone) (rcode int, result string) {
	key, signed := tsig.ValidatedKeyName(ctx)
	switch {
	case len(x.rules) == 0:
		return dns.RcodeRefused, "disabled"
	case !signed:
		log.Debugf("zone %s: unsigned UPDATE refused", z.name)
		return dns.RcodeRefused, "unsigned"
	}
	u, rcode := parseUpdate(r, func(name string) string {
		if zz := x.zoneOf(name); zz != nil {
			return zz.name
		}
		return ""
	})
	switch rcode {
	case dns.RcodeSuccess:
	case dns.RcodeNotAuth, dns.RcodeNotZone:
		return rcode, "notauth"
	default:
		return rcode, "malformed"
	}
	lease := make([]bool, len(u.changes))
	for i, c := range u.changes {
		rule, ok := permitting(x.rules, key, u.zone, c.name, c.rrtype)
		if !ok {
			log.Infof("zone %s: UPDATE of %s %s with key %s refused: no rule lets it", z.name, c.name, dns.TypeToString[c.rrtype], key)
			return dns.RcodeRefused, "denied"
		}
		lease[i] = rule.lease
	}
	for range updateAttempts {
		rcode, err := x.applyUpdate(ctx, z, u, lease)
		switch {
		case errors.Is(err, errChanged):
			continue
		case err != nil:
			log.Warningf("zone %s: UPDATE with key %s failed: %v", z.name, key, err)
			return dns.RcodeServerFailure, "error"
		case rcode != dns.RcodeSuccess:
			return rcode, resultOf(rcode)
		}
		for _, c := range u.changes {
			log.Infof("zone %s: UPDATE with key %s: %s", z.name, key, describe(c))
		}
		return dns.RcodeSuccess, "applied"
	}
	log.Warningf("zone %s: UPDATE with key %s gave up: %v", z.name, key, errChanged)
	return dns.RcodeServerFailure, "error"
}

// resultOf names the metric's result of an UPDATE answered rcode.
func resultOf(rcode int) string {
	switch rcode {
	case dns.RcodeRefused:
		return "denied"
	case dns.RcodeFormatError:
		return "malformed"
	}
	return "prerequisite"
}

// applyUpdate reads the names u reads or writes, at one etcd revision,
// checks u's prerequisites against them, and writes u's changes in one etcd
// transaction that succeeds only if none of those names changed since. The
// records written under a rule with a lease (lease[i] for u.changes[i]) get
// the block's update lease. errChanged says to try again.
func (x *EtcdZone) applyUpdate(ctx context.Context, z *zone, u *update, lease []bool) (int, error) {
	n, reads, err := x.readNames(ctx, z, u)
	if err != nil {
		return 0, err
	}
	for _, p := range u.prereqs {
		if rcode := n.holds(p); rcode != dns.RcodeSuccess {
			return rcode, nil
		}
	}
	before := map[string]bool{}
	for _, e := range n.entries {
		before[e.key] = true
	}
	for i, c := range u.changes {
		if rcode := n.change(c, msg.Path(c.name, x.etcd.PathPrefix), lease[i]); rcode != dns.RcodeSuccess {
			return rcode, nil
		}
	}
	puts, deletes := writes(n, before)
	if len(puts)+len(deletes) == 0 {
		return dns.RcodeSuccess, nil
	}
	ctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	var leaseID clientv3.LeaseID
	ops := make([]clientv3.Op, 0, len(puts)+len(deletes))
	for _, e := range puts {
		var opts []clientv3.OpOption
		if e.lease {
			if leaseID == 0 {
				grant, err := x.client.Grant(ctx, int64(x.updateLease/time.Second))
				if err != nil {
					return 0, fmt.Errorf("granting a lease: %w", err)
				}
				leaseID = grant.ID
			}
			opts = append(opts, clientv3.WithLease(leaseID))
		}
		ops = append(ops, clientv3.OpPut(e.key, string(e.value), opts...))
	}
	for _, key := range deletes {
		ops = append(ops, clientv3.OpDelete(key))
	}
	resp, err := x.client.Txn(ctx).If(reads...).Then(ops...).Commit()
	if leaseID != 0 && (err != nil || !resp.Succeeded) {
		// etcd grants a lease to any user: one refused its write (no
		// permission) must not leave the lease behind.
		_, _ = x.client.Revoke(context.WithoutCancel(ctx), leaseID)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("writing: %w", x.client.Explain(err))
	case !resp.Succeeded:
		return 0, errChanged
	}
	return dns.RcodeSuccess, nil
}

// readNames reads the etcd keys of every name u reads or writes (each
// name's key range, names below it included), all at one revision, and
// returns their records and the comparisons that hold while none of them
// changes.
func (x *EtcdZone) readNames(ctx context.Context, z *zone, u *update) (*names, []clientv3.Cmp, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	var (
		n     = &names{}
		reads []clientv3.Cmp
		rev   int64
		seen  = map[string]bool{}
	)
	read := func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		path := msg.Path(name, x.etcd.PathPrefix)
		resp, err := x.client.Get(ctx, path, clientv3.WithRange(path+"0"), clientv3.WithRev(rev))
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, x.client.Explain(err))
		}
		if rev == 0 {
			// etcd's header gives its current revision, also for a read
			// at an earlier one: the first read's is the revision of all.
			rev = resp.Header.Revision
		}
		reads = append(reads, clientv3.Compare(clientv3.ModRevision(path).WithRange(path+"0"), "<", rev+1))
		for _, kv := range resp.Kvs {
			owner, rrs, err := x.records(z, kv)
			if err != nil || owner != name {
				continue
			}
			n.entries = append(n.entries, &entry{key: string(kv.Key), owner: owner, rrs: rrs})
			reads = append(reads, clientv3.Compare(clientv3.Version(string(kv.Key)), "=", kv.Version))
		}
		return nil
	}
	for _, p := range u.prereqs {
		if err := read(p.name); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range u.changes {
		if err := read(c.name); err != nil {
			return nil, nil, err
		}
	}
	return n, reads, nil
}

// writes returns what makes the keys of n's names what n holds now, given
// the keys before: the entries to put (those an UPDATE wrote) and the keys
// to delete.
func writes(n *names, before map[string]bool) (puts []*entry, deletes []string) {
	now := map[string]bool{}
	for _, e := range n.entries {
		now[e.key] = true
		if e.value != nil {
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

// describe says what c does, for the log.
func describe(c change) string {
	data := ""
	if c.rr != nil && c.op != opDeleteRRset && c.op != opDeleteName {
		data = " " + c.rr.String()
	}
	return [...]string{"add", "delete RRset", "delete name", "delete"}[c.op] + " " + c.name + " " + dns.TypeToString[c.rrtype] + data
}
