package etcdxfr

import (
	"context"
	"time"

	"github.com/coredns/coredns/plugin/transfer"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// etcdTimeout bounds each read from etcd, as the etcd plugin's.
	etcdTimeout = 5 * time.Second
	// pageSize is how many keys a transfer reads from etcd at a time: a
	// zone is streamed page by page, never held whole.
	pageSize = 1000
)

// Transfer implements transfer.Transferer. It sends z's SOA and NS set, then
// every record of the zone, page by page as it reads them from etcd, all from
// one etcd revision, and the SOA again. An IXFR for the current serial or a
// newer one gets the SOA alone ("up to date"); any older one gets the whole
// zone. When etcd fails before the first page the transfer fails; when it
// fails later the transfer ends without its closing SOA, so the secondary
// discards it and keeps its copy.
func (x *EtcdXfr) Transfer(name string, serial uint32) (<-chan []dns.RR, error) {
	z := x.zones[dns.CanonicalName(name)]
	if z == nil {
		return nil, transfer.ErrNotAuthoritative
	}
	soa := x.soa(z)
	if serial != 0 && !newer(soa.Serial, serial) {
		ch := make(chan []dns.RR, 1)
		ch <- []dns.RR{soa}
		close(ch)
		return ch, nil
	}
	page, err := x.read(z, z.path, 0)
	if err != nil {
		log.Warningf("zone %s: transfer failed: %v", z.name, err)
		return nil, err
	}
	rev := page.Header.Revision
	ch := make(chan []dns.RR)
	go func() {
		defer close(ch)
		ch <- append([]dns.RR{soa}, x.apex.nsSet(z.name)...)
		for {
			ch <- x.records(z, page.Kvs)
			if !page.More {
				break
			}
			last := string(page.Kvs[len(page.Kvs)-1].Key)
			if page, err = x.read(z, last+"\x00", rev); err != nil {
				log.Warningf("zone %s: transfer ended unfinished: %v", z.name, err)
				return
			}
		}
		ch <- []dns.RR{soa}
	}()
	return ch, nil
}

// read reads a page of z's keys from key on, at revision rev (0: the
// current one).
func (x *EtcdXfr) read(z *zone, key string, rev int64) (*clientv3.GetResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	return x.etcd.Client.Get(ctx, key,
		clientv3.WithRange(clientv3.GetPrefixRangeEnd(z.path)),
		clientv3.WithLimit(pageSize),
		clientv3.WithRev(rev),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
}
