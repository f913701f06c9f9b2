package zone

import "sync"

// serialBase puts every serial above the Unix-time serials of etcdxfr, which
// this plugin replaces (1.8e9 in 2027), so that secondaries keep following
// a primary after the upgrade (RFC 1982: 2e9 + 10 × revision is the greater
// until the revision reaches 2e8).
const serialBase = 2_000_000_000

// Serial is the SOA serial of one zone: 2,000,000,000 plus ten times the etcd
// revision of the zone's last change (rev), plus the number of changes since
// that etcd does not hold (local: a Corefile reload, new global addresses
// from a file). Every replica that has read the same etcd state publishes
// the same serial, and a restarted one the serial it had before, whatever
// its clock says.
//
// A change in etcd always moves the serial past every earlier one, also
// past local changes (nine of them fit between two revisions; more carry
// on into the next revision's range).
type Serial struct {
	rev   int64
	local int64
}

// Value returns the serial, modulo 2^32 as RFC 1982 allows.
func (s Serial) Value() uint32 { return uint32(s.number()) } // #nosec G115 -- wraps as RFC 1982 allows

// number is the serial without the wrap.
func (s Serial) number() int64 { return serialBase + 10*s.rev + s.local }

// At returns the serial after a change in etcd at revision rev: the serial
// of rev, but at least one more than s. A revision not past s's changes
// nothing.
func (s Serial) At(rev int64) Serial {
	if rev <= s.rev {
		return s
	}
	next := Serial{rev: rev}
	if next.number() <= s.number() {
		next.local = s.number() + 1 - next.number()
	}
	return next
}

// Bumped returns the serial after a change that etcd does not hold.
func (s Serial) Bumped() Serial { return Serial{rev: s.rev, local: s.local + 1} }

// serials keeps each zone's serial across reloads of the Corefile, by server
// and zone, so that the new instance goes on from where the old one stood.
var serials struct {
	sync.Mutex
	m map[string]Serial
}

// Reloaded returns the serial of an instance of zone on server whose first
// version has s, and records it as the one the server publishes. The first
// instance's serial is s itself; a reloaded one's is s when s is greater
// than its predecessor's, or the same and vouched for (the zone's stamp
// says that the zone is the one the predecessor published); else one more
// than its predecessor's: a reload may have changed the zone.
func Reloaded(server, zone string, s Serial, vouched bool) Serial {
	serials.Lock()
	defer serials.Unlock()
	key := server + " " + zone
	if prev, ok := serials.m[key]; ok && !(vouched && s == prev) {
		if s = prev.At(s.rev); s == prev {
			s = prev.Bumped()
		}
	}
	if serials.m == nil {
		serials.m = map[string]Serial{}
	}
	serials.m[key] = s
	return s
}

// Remember records s as the serial zone on server publishes.
func Remember(server, zone string, s Serial) {
	serials.Lock()
	defer serials.Unlock()
	if serials.m != nil {
		serials.m[server+" "+zone] = s
	}
}

// Newer reports whether serial a is greater than b in RFC 1982 arithmetic.
func Newer(a, b uint32) bool { return a != b && a-b < 1<<31 }
