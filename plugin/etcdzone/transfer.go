package etcdzone

import (
	"errors"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/globaladdr/globaladdr/plugin/etcdzone/zone"

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
	if z == nil || z.Name() != dns.CanonicalName(name) {
		return nil, transfer.ErrNotAuthoritative
	}
	v := z.Current()
	if v == nil {
		log.Warningf("zone %s: transfer refused: %v", z, errNotLoaded)
		z.metrics.inc(transferErrors)
		return nil, errNotLoaded
	}
	soa := v.SOA()
	z.metrics.set(transferredSerial, float64(soa.Serial))
	rrs := []dns.RR{soa}
	switch {
	case serial != 0 && !zone.Newer(soa.Serial, serial):
		// up to date: the SOA alone
	default:
		if diff, ok := z.Incremental(v, serial); serial != 0 && ok {
			rrs = diff
			z.metrics.inc(transfers, "ixfr")
			break
		}
		rrs = z.Records(v)
		z.metrics.inc(transfers, "axfr")
	}

	ch := make(chan []dns.RR)
	go func() {
		defer close(ch)
		for len(rrs) > 0 {
			n := min(batch, len(rrs))
			ch <- rrs[:n]
			rrs = rrs[n:]
		}
	}()
	return ch, nil
}

// Loaded returns what an AXFR of the zone name would carry now, SOA first
// and last, and false when name is not one of x's zones or is not loaded
// yet. Unlike Transfer it is no transfer: it moves neither
// transferred_serial nor the transfer counts, so that a reader of the whole
// zone (publish) hides no secondary's lag.
func (x *EtcdZone) Loaded(name string) ([]dns.RR, bool) {
	z := x.zoneOf(name)
	if z == nil || z.Name() != dns.CanonicalName(name) {
		return nil, false
	}
	v := z.Current()
	if v == nil {
		return nil, false
	}
	return z.Records(v), true
}

// Serial returns the serial of the zone name as Transfer would send it now,
// and false when name is not one of x's zones or is not loaded yet: a reader
// of the whole zone (publish) learns from it when to read it again.
func (x *EtcdZone) Serial(name string) (uint32, bool) {
	z := x.zoneOf(name)
	if z == nil || z.Name() != dns.CanonicalName(name) {
		return 0, false
	}
	v := z.Current()
	if v == nil {
		return 0, false
	}
	return v.SOA().Serial, true
}
