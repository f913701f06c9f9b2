package etcdzone

import (
	"errors"

	"github.com/coredns/coredns/plugin/file/tree"
	"github.com/coredns/coredns/plugin/transfer"

	"github.com/miekg/dns"
)

// batch is how many records Transfer sends on its channel at a time.
const batch = 500

// errNotLoaded fails a transfer of a zone that is not loaded yet.
var errNotLoaded = errors.New("the zone is not loaded yet")

// Transfer implements transfer.Transferer. It sends the zone the queries are
// answered from, as it stands when the transfer starts: the SOA, the NS
// set, every other record, and the SOA again. An IXFR for the current serial
// or a newer one gets the SOA alone ("up to date"); any older one gets the
// whole zone. A zone not loaded yet is not transferred.
func (x *EtcdZone) Transfer(name string, serial uint32) (<-chan []dns.RR, error) {
	z := x.zoneOf(name)
	if z == nil || z.name != dns.CanonicalName(name) {
		return nil, transfer.ErrNotAuthoritative
	}
	x.mu.RLock()
	if z.data == nil {
		x.mu.RUnlock()
		log.Warningf("zone %s: transfer refused: %v", z.name, errNotLoaded)
		transferErrors.WithLabelValues(z.server, z.name).Inc()
		return nil, errNotLoaded
	}
	soa := z.data.zone.SOA
	transferredSerial.WithLabelValues(z.server, z.name).Set(float64(soa.Serial))
	var rrs []dns.RR
	if serial == 0 || newer(soa.Serial, serial) {
		rrs = snapshot(z.data)
	}
	x.mu.RUnlock()

	ch := make(chan []dns.RR)
	go func() {
		defer close(ch)
		ch <- []dns.RR{soa}
		if rrs == nil {
			return
		}
		for len(rrs) > 0 {
			n := min(batch, len(rrs))
			ch <- rrs[:n]
			rrs = rrs[n:]
		}
		ch <- []dns.RR{soa}
	}()
	return ch, nil
}

// snapshot returns the records of d but the SOA: the NS set first, then the
// rest in the tree's order.
func snapshot(d *data) []dns.RR {
	rrs := make([]dns.RR, 0, d.count+len(d.zone.NS))
	rrs = append(rrs, d.zone.NS...)
	_ = d.zone.Walk(func(_ *tree.Elem, m map[uint16][]dns.RR) error {
		for t, set := range m {
			if t != dns.TypeSOA { // the apex's node (see newData)
				rrs = append(rrs, set...)
			}
		}
		return nil
	})
	return rrs
}
