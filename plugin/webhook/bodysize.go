package webhook

import (
	"fmt"
	"sync"
)

// defaultMaxBody is the most a body holds, either way, by default:
// external-dns v0.23's own (--webhook-provider-max-body-size, 32 MiB).
const defaultMaxBody = 32 << 20

// bodyLimit is the cap on the API's bodies (max_body_size): a request
// above it is answered 413, as external-dns's own webhook servers answer
// it, and a GET /records reply above it is one external-dns, whose flag
// caps what it reads, can't read: it exits. It follows the replies' size
// against it, in the gauge and in the log, once each time it moves to
// another band.
type bodyLimit struct {
	max int64

	mu   sync.Mutex
	band sizeBand
}

// sizeBand is where a GET /records reply's size stands against the cap:
// under half of it, over half (room still, but not for doubling), or over.
type sizeBand int

const (
	sizeRoom sizeBand = iota
	sizeNear
	sizeOver
)

// bandOf returns the band of a reply of n bytes.
func (l *bodyLimit) bandOf(n int) sizeBand {
	switch {
	case int64(n) > l.max:
		return sizeOver
	case int64(n) > l.max/2:
		return sizeNear
	}
	return sizeRoom
}

// observe records a GET /records reply of n bytes holding endpoints
// endpoints: external-dns logs only that it could not decode the body.
func (l *bodyLimit) observe(n, endpoints int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	recordsBytes.Set(float64(n))
	band := l.bandOf(n)
	if band == l.band {
		return
	}
	l.band = band
	size, limit := sizeText(int64(n)), sizeText(l.max)
	switch band {
	case sizeOver:
		log.Errorf("GET /records: %d endpoints in %s, over max_body_size %s, as much as external-dns reads with the same "+
			"--webhook-provider-max-body-size: it exits; split the zones between external-dns instances (--domain-filter), or raise both",
			endpoints, size, limit)
	case sizeNear:
		log.Warningf("GET /records: %d endpoints in %s, over half of max_body_size %s: "+
			"split the zones between external-dns instances (--domain-filter) before it grows past", endpoints, size, limit)
	default:
		log.Infof("GET /records: %d endpoints in %s, under half of max_body_size %s again", endpoints, size, limit)
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
