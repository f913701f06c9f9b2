package etcdzone

import (
	"errors"

	"github.com/coredns/coredns/plugin/transfer"

	"github.com/miekg/dns"
)

// batch is how many records Transfer sends on its channel at a time; the
// transfer plugin sizes its envelopes from the records themselves.
const batch = 500

// errNotLoaded fails a transfer of a zone that is not loaded yet.
var errNotLoaded = errors.New("the zone is not loaded yet")

// Transfer implements transfer.Transferer. It sends the zone the queries are
// answered from, as it stands when the transfer starts. An IXFR for the
// current serial or a newer one gets the SOA alone ("up to date"); one for
// a serial the journal holds the changes since (RFC 1995), unless they
// outweigh the zone; any other one, and an AXFR, the whole zone: the SOA,
// the NS set, every other record, and the SOA again. A zone not loaded yet
// is not transferred.
func (x *EtcdZone) Transfer(name string, serial uint32) (<-chan []dns.RR, error) {
	z := x.zoneOf(name)
	if z == nil || z.name != dns.CanonicalName(name) {
		return nil, transfer.ErrNotAuthoritative
	}
	v := z.current.Load()
	if v == nil {
		log.Warningf("zone %s: transfer refused: %v", z.name, errNotLoaded)
		transferErrors.WithLabelValues(z.server, z.name).Inc()
		return nil, errNotLoaded
	}
	soa := v.zone.SOA
	transferredSerial.WithLabelValues(z.server, z.name).Set(float64(soa.Serial))
	var rrs []dns.RR
	switch {
	case serial != 0 && !newer(soa.Serial, serial):
		// up to date: the SOA alone
	case serial != 0 && x.incremental(z, v, serial, &rrs):
		transfers.WithLabelValues(z.server, z.name, "ixfr").Inc()
	default:
		rrs = snapshot(v)
		rrs = append(rrs, soa)
		transfers.WithLabelValues(z.server, z.name, "axfr").Inc()
	}

	ch := make(chan []dns.RR)
	go func() {
		defer close(ch)
		ch <- []dns.RR{soa}
		for len(rrs) > 0 {
			n := min(batch, len(rrs))
			ch <- rrs[:n]
			rrs = rrs[n:]
		}
	}()
	return ch, nil
}

// incremental puts into *rrs what an IXFR from serial gets after v's SOA,
// when z's journal holds the changes from serial to v, and they hold fewer
// records than v: each change's old SOA, the records it removes, its new
// SOA and the records it adds, then v's SOA again (RFC 1995, 4).
func (x *EtcdZone) incremental(z *zone, v *version, serial uint32, rrs *[]dns.RR) bool {
	changes, ok := z.journal.since(serial)
	if !ok || changes[len(changes)-1].to.Serial != v.zone.SOA.Serial {
		return false
	}
	n := 0
	for _, c := range changes {
		n += len(c.removed) + len(c.added) + 2
	}
	if n > v.count {
		return false
	}
	out := make([]dns.RR, 0, n+1)
	for _, c := range changes {
		out = append(out, c.from)
		out = append(out, c.removed...)
		out = append(out, c.to)
		out = append(out, c.added...)
	}
	*rrs = append(out, v.zone.SOA)
	return true
}

// snapshot returns the records of v but the SOA: the NS set first, then the
// rest in canonical order.
func snapshot(v *version) []dns.RR {
	rrs := make([]dns.RR, 0, v.count+len(v.zone.NS)+1)
	rrs = append(rrs, v.zone.NS...)
	for _, e := range v.elems {
		rrs = appendRecords(rrs, e, nil)
	}
	return rrs
}
