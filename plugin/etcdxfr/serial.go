package etcdxfr

import (
	"sync"
	"time"
)

// serial is the SOA serial of one zone of one server. It is the Unix time of
// the zone's last change, as BIND's "serial-update-method unixtime" makes
// it: a change sets it to the current time, but never to less than one more
// than before, and changes are coalesced so that it moves at most once a
// second. So it never runs ahead of the clock, and a restarted server, which
// starts from the current time, never goes backwards, as long as the clock
// does not.
type serial struct {
	mu    sync.Mutex
	value uint32
	// at is when value was set, by the monotonic clock.
	at time.Time
}

// serials keeps each zone's serial across reloads, by server and zone, so
// that a reloaded server goes on from where its previous instance stood.
var serials struct {
	sync.Mutex
	m map[string]*serial
}

// serialOf returns the serial of zone on server, and whether it was known
// before (a reload). A new one starts at the current time.
func serialOf(server, zone string) (s *serial, known bool) {
	serials.Lock()
	defer serials.Unlock()
	key := server + " " + zone
	if s, ok := serials.m[key]; ok {
		return s, true
	}
	if serials.m == nil {
		serials.m = map[string]*serial{}
	}
	now := time.Now()
	s = &serial{value: unixSerial(now), at: now}
	serials.m[key] = s
	return s, false
}

// get returns the current serial.
func (s *serial) get() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value
}

// next returns how long a bump has to wait: a second after the last.
func (s *serial) next() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Until(s.at.Add(time.Second))
}

// bump moves the serial forward for a change at now, and returns it.
func (s *serial) bump(now time.Time) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := unixSerial(now)
	if !newer(v, s.value) {
		v = s.value + 1
	}
	s.value, s.at = v, now
	return v
}

// unixSerial returns the serial of a change at t: its Unix time, modulo 2^32
// as RFC 1982 serial arithmetic allows.
func unixSerial(t time.Time) uint32 { return uint32(t.Unix()) } // #nosec G115 -- wraps as RFC 1982 allows

// newer reports whether serial a is greater than b in RFC 1982 arithmetic.
func newer(a, b uint32) bool { return a != b && a-b < 1<<31 }
