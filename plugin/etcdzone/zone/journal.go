package zone

import (
	"slices"
	"sync"

	"github.com/miekg/dns"
)

// Journal keeps a zone's last changes, oldest first, for incremental zone
// transfers (RFC 1995): at most maxRecords records and maxBytes bytes (as
// they go on the wire, uncompressed) over all of them; the oldest go first.
// It lives in memory: after a restart an IXFR gets the whole zone.
type Journal struct {
	maxRecords, maxBytes int

	mu      sync.Mutex
	changes []Delta
	records int
	bytes   int
}

// NewJournal returns a journal of at most maxRecords records and maxBytes
// bytes.
func NewJournal(maxRecords, maxBytes int) *Journal {
	return &Journal{maxRecords: maxRecords, maxBytes: maxBytes}
}

// Add appends c, and drops the oldest changes while the journal holds too
// much. A change larger than the journal empties it: no IXFR reaches past
// it.
func (j *Journal) Add(c Delta) {
	if j.maxRecords == 0 {
		return // a journal of none
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.changes = append(j.changes, c)
	j.records += len(c.Removed) + len(c.Added)
	j.bytes += size(c)
	for len(j.changes) > 0 && (j.records > j.maxRecords || j.bytes > j.maxBytes) {
		j.records -= len(j.changes[0].Removed) + len(j.changes[0].Added)
		j.bytes -= size(j.changes[0])
		j.changes[0] = Delta{}
		j.changes = j.changes[1:]
	}
}

// since returns the changes from the version of serial on, and whether the
// journal holds them.
func (j *Journal) since(serial uint32) ([]Delta, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i, c := range j.changes {
		if c.From.Serial == serial {
			return slices.Clone(j.changes[i:]), true
		}
	}
	return nil, false
}

// size returns the bytes c's records take on the wire, uncompressed, with
// its two SOA records.
func size(c Delta) int {
	n := dns.Len(c.From) + dns.Len(c.To)
	for _, rr := range c.Removed {
		n += dns.Len(rr)
	}
	for _, rr := range c.Added {
		n += dns.Len(rr)
	}
	return n
}

// Incremental returns what an IXFR from serial gets when the journal holds
// the changes from serial to v, and they hold fewer records than v: v's
// SOA, then each change's old SOA, the records it removes, its new SOA and
// the records it adds, then v's SOA again (RFC 1995, 4).
func (j *Journal) Incremental(v *Version, serial uint32) ([]dns.RR, bool) {
	changes, ok := j.since(serial)
	if !ok || changes[len(changes)-1].To.Serial != v.SOA().Serial {
		return nil, false
	}
	n := 0
	for _, c := range changes {
		n += len(c.Removed) + len(c.Added) + 2
	}
	if n > v.count {
		return nil, false
	}
	out := make([]dns.RR, 0, n+2)
	out = append(out, v.SOA())
	for _, c := range changes {
		out = append(out, c.From)
		out = append(out, c.Removed...)
		out = append(out, c.To)
		out = append(out, c.Added...)
	}
	return append(out, v.SOA()), true
}
