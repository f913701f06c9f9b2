package etcdzone

import "sync"

// serialBase puts every serial above the Unix-time serials of etcdxfr, which
// this plugin replaces (1.8e9 in 2027), so that secondaries keep following
// a primary after the upgrade (RFC 1982: 2e9 + 10 × revision is the greater
// until the revision reaches 2e8).
const serialBase = 2_000_000_000

// serial is the SOA serial of one zone: 2,000,000,000 plus ten times the etcd
// revision of the zone's last change (rev), plus the number of changes since
// that etcd does not hold (local: a Corefile reload, new global addresses
// from a file). Every replica that has read the same etcd state publishes
// the same serial, and a restarted one the serial it had before, whatever
// its clock says.
//
// A change in etcd always moves the serial past every earlier one, also
// past local changes (nine of them fit between two revisions; more carry
// on into the next revision's range).
type serial struct {
	rev   int64
	local int64
}

// value returns the serial, modulo 2^32 as RFC 1982 allows.
func (s serial) value() uint32 { return uint32(s.number()) } // #nosec G115 -- wraps as RFC 1982 allows

// number is the serial without the wrap.
func (s serial) number() int64 { return serialBase + 10*s.rev + s.local }

// at returns the serial after a change in etcd at revision rev: the serial
// of rev, but at least one more than s. A revision not past s's changes
// nothing.
func (s serial) at(rev int64) serial {
	if rev <= s.rev {
		return s
	}
	next := serial{rev: rev}
	if next.number() <= s.number() {
		next.local = s.number() + 1 - next.number()
	}
	return next
}

// bumped returns the serial after a change that etcd does not hold.
func (s serial) bumped() serial { return serial{rev: s.rev, local: s.local + 1} }

// serials keeps each zone's serial across reloads of the Corefile, by server
// and zone, so that the new instance goes on from where the old one stood
// (a reload may change the zone, so it counts as a change).
var serials struct {
	sync.Mutex
	m map[string]serial
}

// reloaded returns the serial of an instance of zone on server that has read
// s from etcd, and records it as the one the server publishes. The first
// instance's serial is s itself; a reloaded one's is greater than its
// predecessor's, by one when etcd did not change in between.
func reloaded(server, zone string, s serial) serial {
	serials.Lock()
	defer serials.Unlock()
	key := server + " " + zone
	if prev, ok := serials.m[key]; ok {
		if s = prev.at(s.rev); s == prev {
			s = prev.bumped()
		}
	}
	if serials.m == nil {
		serials.m = map[string]serial{}
	}
	serials.m[key] = s
	return s
}

// remember records s as the serial zone on server publishes.
func remember(server, zone string, s serial) {
	serials.Lock()
	defer serials.Unlock()
	if serials.m != nil {
		serials.m[server+" "+zone] = s
	}
}

// newer reports whether serial a is greater than b in RFC 1982 arithmetic.
func newer(a, b uint32) bool { return a != b && a-b < 1<<31 }
