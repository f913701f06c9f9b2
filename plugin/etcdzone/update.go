package etcdzone

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/coredns/coredns/plugin/tsig"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/etcdtree"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/update"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// serveUpdate answers r, an RFC 2136 UPDATE for zone z, and writes its
// changes into etcd, all or nothing, when the block's rules let the TSIG key
// it was signed with make them (the tsig plugin checked the signature) and
// its prerequisites hold.
func (x *EtcdZone) serveUpdate(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, z *blockZone) (int, error) {
	rcode, result := x.takeUpdate(ctx, r, z)
	z.metrics.inc(updates, result)
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// takeUpdate checks and applies r, and returns the rcode of the answer and
// the result the metric counts.
func (x *EtcdZone) takeUpdate(ctx context.Context, r *dns.Msg, z *blockZone) (rcode int, result string) {
	key, signed := tsig.ValidatedKeyName(ctx)
	switch {
	case len(x.corefile.Rules) == 0:
		return dns.RcodeRefused, "disabled"
	case !signed:
		log.Debugf("zone %s: unsigned UPDATE refused", z)
		return dns.RcodeRefused, "unsigned"
	}
	u, rcode := update.Parse(r, func(name string) string {
		if zz := x.zoneOf(name); zz != nil {
			return zz.Name()
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
	lease, denied, ok := u.Permitted(x.corefile.Rules, key)
	if !ok {
		log.Infof("zone %s: UPDATE of %s with key %s refused: no rule lets it", z, denied, key)
		return dns.RcodeRefused, "denied"
	}
	rcode, err := update.Apply(ctx, store{x, z}, u, lease)
	switch {
	case errors.Is(err, update.ErrChanged):
		log.Warningf("zone %s: UPDATE with key %s gave up: %v", z, key, err)
		return rcode, "error"
	case err != nil:
		log.Warningf("zone %s: UPDATE with key %s failed: %v", z, key, err)
		return rcode, "error"
	case rcode != dns.RcodeSuccess:
		return rcode, resultOf(rcode)
	}
	for _, c := range u.Changes() {
		log.Infof("zone %s: UPDATE with key %s: %s", z, key, c)
	}
	return dns.RcodeSuccess, "applied"
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

// store is etcd as the store of zone z's UPDATEs.
type store struct {
	x *EtcdZone
	z *blockZone
}

// Path implements update.Store.
func (s store) Path(name string) string { return msg.Path(name, s.x.etcd.PathPrefix) }

// Read implements update.Store: it reads the etcd keys of every name (each
// name's key range, names below it included), all at one revision. Its
// commit writes in one etcd transaction that succeeds only if none of those
// keys changed since.
func (s store) Read(ctx context.Context, names []string) ([]*update.Entry, update.Commit, error) {
	rctx, cancel := context.WithTimeout(ctx, etcdtree.Timeout)
	defer cancel()
	var (
		entries []*update.Entry
		reads   []clientv3.Cmp
		rev     int64
		seen    = map[string]bool{}
	)
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		path := s.Path(name)
		resp, err := s.x.client.Get(rctx, path, clientv3.WithRange(path+"0"), clientv3.WithRev(rev))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", name, s.x.client.Explain(err))
		}
		if rev == 0 {
			// etcd's header gives its current revision, also for a read
			// at an earlier one: the first read's is the revision of all.
			rev = resp.Header.Revision
		}
		reads = append(reads, clientv3.Compare(clientv3.ModRevision(path).WithRange(path+"0"), "<", rev+1))
		for _, kv := range resp.Kvs {
			src, err := s.x.tree.read(string(kv.Key), kv)
			if err != nil || src.Owner != name {
				continue
			}
			entries = append(entries, &update.Entry{Key: src.Key, Owner: src.Owner, RRs: src.RRs})
			reads = append(reads, clientv3.Compare(clientv3.Version(string(kv.Key)), "=", kv.Version))
		}
	}
	return entries, func(ctx context.Context, puts []*update.Entry, deletes []string) (bool, error) {
		return s.commit(ctx, reads, puts, deletes)
	}, nil
}

// commit writes puts and deletes if reads hold, in one etcd transaction;
// the puts with a lease get one of the block's update lease.
func (s store) commit(ctx context.Context, reads []clientv3.Cmp, puts []*update.Entry, deletes []string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdtree.Timeout)
	defer cancel()
	cli := s.x.client
	var leaseID clientv3.LeaseID
	ops := make([]clientv3.Op, 0, len(puts)+len(deletes))
	for _, e := range puts {
		var opts []clientv3.OpOption
		if e.Lease {
			if leaseID == 0 {
				grant, err := cli.Grant(ctx, int64(s.x.corefile.UpdateLease/time.Second))
				if err != nil {
					return false, fmt.Errorf("granting a lease: %w", err)
				}
				leaseID = grant.ID
			}
			opts = append(opts, clientv3.WithLease(leaseID))
		}
		ops = append(ops, clientv3.OpPut(e.Key, string(e.Value), opts...))
	}
	for _, key := range deletes {
		ops = append(ops, clientv3.OpDelete(key))
	}
	resp, err := cli.Txn(ctx).If(reads...).Then(ops...).Commit()
	if leaseID != 0 && (err != nil || !resp.Succeeded) {
		// etcd grants a lease to any user: one refused its write (no
		// permission) must not leave the lease behind.
		_, _ = cli.Revoke(context.WithoutCancel(ctx), leaseID)
	}
	if err != nil {
		return false, fmt.Errorf("writing: %w", cli.Explain(err))
	}
	return resp.Succeeded, nil
}
