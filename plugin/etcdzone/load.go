package etcdzone

import (
	"context"
	"time"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// etcdTimeout bounds each read from etcd, as the etcd plugin's.
	etcdTimeout = 5 * time.Second
	// pageSize is how many keys a load reads from etcd at a time.
	pageSize = 1000
)

// load reads z's keys from etcd, page by page, all at one revision, into new
// data. It returns the data, the revision read at, and the greatest
// revision at which one of the keys was written.
func (x *EtcdZone) load(ctx context.Context, z *zone) (d *data, rev, written int64, err error) {
	d = x.newData(z)
	from := z.key
	for {
		page, err := x.read(ctx, z, from, rev)
		if err != nil {
			return nil, 0, 0, err
		}
		if rev == 0 {
			rev = page.Header.Revision
		}
		for _, kv := range page.Kvs {
			if z.holds(kv.Key) {
				k := x.readKey(z, kv, false)
				d.set(k.key, k.owner, k.rrs)
				written = max(written, kv.ModRevision)
			}
		}
		if !page.More {
			return d, rev, written, nil
		}
		from = string(page.Kvs[len(page.Kvs)-1].Key) + "\x00"
	}
}

// read reads a page of z's keys from key on, at revision rev (0: the
// current one).
func (x *EtcdZone) read(ctx context.Context, z *zone, key string, rev int64) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	return x.client.Get(ctx, key,
		clientv3.WithRange(z.rangeEnd()),
		clientv3.WithLimit(pageSize),
		clientv3.WithRev(rev),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
}

// newData returns the data of z before any key: the apex records and those
// the Corefile adds.
func (x *EtcdZone) newData(z *zone) *data {
	var withholds func(dns.RR) bool
	if x.view != nil {
		withholds = x.view.Withholds
	}
	d := newData(z.name, x.apex.soa(z.name, z.serial.value()), x.apex.nsSet(z.name, x.apex.ns), withholds)
	d.zone.Upstream = chaser{x}
	for name, rrs := range z.fixed {
		d.set(name, rrs[0].Header().Name, rrs)
	}
	return d
}
