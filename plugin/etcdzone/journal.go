package etcdzone

import (
	"slices"
	"sync"

	"github.com/miekg/dns"
)

// journal keeps a zone's last changes, oldest first, for incremental zone
// transfers (RFC 1995): at most maxRecords records and maxBytes bytes (as
// they go on the wire, uncompressed) over all of them; the oldest go first.
// It lives in memory: after a restart an IXFR gets the whole zone.
type journal struct {
	maxRecords, maxBytes int

	mu      sync.Mutex
	changes []delta
	records int
	bytes   int
}

// add appends c, and drops the oldest changes while the journal holds too
// much. A change larger than the journal empties it: no IXFR reaches past
// it.
func (j *journal) add(c delta) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.changes = append(j.changes, c)
	j.records += len(c.removed) + len(c.added)
	j.bytes += size(c)
	for len(j.changes) > 0 && (j.records > j.maxRecords || j.bytes > j.maxBytes) {
		j.records -= len(j.changes[0].removed) + len(j.changes[0].added)
		j.bytes -= size(j.changes[0])
		j.changes[0] = delta{}
		j.changes = j.changes[1:]
	}
}

// since returns the changes from the version of serial on, and whether the
// journal holds them.
func (j *journal) since(serial uint32) ([]delta, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, c := range j.changes {
		if c.from.Serial == serial {
			return slices.Clone(j.changes[i:]), true
		}
	}
	return nil, false
}

// size returns the bytes c's records take on the wire, uncompressed, with
// its two SOA records.
func size(c delta) int {
	n := dns.Len(c.from) + dns.Len(c.to)
	for _, rr := range c.removed {
		n += dns.Len(rr)
	}
	for _, rr := range c.added {
		n += dns.Len(rr)
	}
	return n
}
