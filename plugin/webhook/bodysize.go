package webhook

import (
	"fmt"
	"sync/atomic"
)

// bodyCap is the most a webhook body holds, either way, in external-dns
// v0.23's default (--webhook-provider-max-body-size, 32 MiB). A request
// above it is answered 413, as external-dns's own webhook servers answer
// it; a GET /records reply above it is one external-dns can't read, and it
// exits. A variable for the tests.
var bodyCap int64 = 32 << 20

// sizeBand is where a GET /records reply's size stands against bodyCap:
// under half of it, over half (room still, but not for doubling), or over.
type sizeBand int32

const (
	sizeRoom sizeBand = iota
	sizeNear
	sizeOver
)

// bandOf returns the band of a reply of n bytes.
func bandOf(n int) sizeBand {
	switch {
	case int64(n) > bodyCap:
		return sizeOver
	case int64(n) > bodyCap/2:
		return sizeNear
	}
	return sizeRoom
}

// replySize follows the size of GET /records's replies, in the gauge and
// in the log, once each time it moves to another band: external-dns logs
// only that it could not decode the body.
type replySize struct{ band atomic.Int32 }

// observe records a reply of n bytes holding endpoints endpoints.
func (s *replySize) observe(n, endpoints int) {
	recordsBytes.Set(float64(n))
	band := bandOf(n)
	if sizeBand(s.band.Swap(int32(band))) == band {
		return
	}
	limit := sizeText(bodyCap)
	switch band {
	case sizeOver:
		log.Errorf("GET /records: %d endpoints in %s, over the %s external-dns v0.23 reads by default: it exits; "+
			"split the zones between external-dns instances (--domain-filter), or raise its --webhook-provider-max-body-size", endpoints, sizeText(int64(n)), limit)
	case sizeNear:
		log.Warningf("GET /records: %d endpoints in %s, over half of the %s external-dns v0.23 reads by default: "+
			"split the zones between external-dns instances (--domain-filter) before it grows past", endpoints, sizeText(int64(n)), limit)
	default:
		log.Infof("GET /records: %d endpoints in %s, under half of external-dns's %s again", endpoints, sizeText(int64(n)), limit)
	}
}

// sizeText writes n bytes in MiB, or in KiB under 1 MiB, whole where it is.
func sizeText(n int64) string {
	unit, name := int64(1<<20), "MiB"
	if n < unit {
		unit, name = 1<<10, "KiB"
	}
	if n%unit == 0 {
		return fmt.Sprintf("%d %s", n/unit, name)
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(unit), name)
}
