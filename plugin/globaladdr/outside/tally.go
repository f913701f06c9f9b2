package outside

import "github.com/miekg/dns"

// Tally counts what the view did to the records of one reply, for the
// metrics. A and AAAA records and ownership records, the bulk of them, have
// fields of their own; the rest (SVCB and HTTPS hints, records dropped for
// an address in their data) are counted by type in Rare, which is nil unless
// they occur. Its zero value counts nothing.
type Tally struct {
	// RewrittenA and RewrittenAAAA count the A and AAAA records whose
	// internal address was replaced.
	RewrittenA, RewrittenAAAA int
	// DroppedA and DroppedAAAA count the internal A and AAAA records
	// dropped, malformed or without a global address of their family.
	DroppedA, DroppedAAAA int
	// DroppedTXT counts the ownership records dropped.
	DroppedTXT int
	// Hidden counts the records dropped because they name a hidden name,
	// and the questions for one.
	Hidden int
	// Tunnelled counts the internal A and AAAA records that a CNAME to
	// the view's tunnel stood for; Unrouted the records of names withheld
	// because their route names no target the view has (CountOwner).
	Tunnelled, Unrouted int
	// Rare counts the records of the other types, by type.
	Rare []typeCount
	// FirstDropped is the first record the view dropped for an address
	// it holds (one with no global address of its family, malformed, or
	// internal in data that can't be rewritten), for the debug log; nil
	// when none was.
	FirstDropped dns.RR
}

// typeCount is a count of records of one type, rewritten or dropped.
type typeCount struct {
	// Type is the records' type.
	Type uint16
	// Rewritten tells rewritten records from dropped ones (or dropped
	// hint addresses).
	Rewritten bool
	// N is how many.
	N int
}

// Empty reports whether t counted nothing.
func (t *Tally) Empty() bool {
	return t.RewrittenA+t.RewrittenAAAA+t.DroppedA+t.DroppedAAAA+t.DroppedTXT+t.Hidden+t.Tunnelled+t.Unrouted == 0 && len(t.Rare) == 0
}

// rewritten counts a rewritten record of type typ.
func (t *Tally) rewritten(typ uint16) {
	switch typ {
	case dns.TypeA:
		t.RewrittenA++
	case dns.TypeAAAA:
		t.RewrittenAAAA++
	default:
		t.addRare(typ, true, 1)
	}
}

// dropped counts n dropped records (or, for SVCB and HTTPS, hint
// addresses) of type typ.
func (t *Tally) dropped(typ uint16, n int) {
	switch typ {
	case dns.TypeA:
		t.DroppedA += n
	case dns.TypeAAAA:
		t.DroppedAAAA += n
	default:
		t.addRare(typ, false, n)
	}
}

// droppedRR counts rr, dropped for an address it holds, and keeps it as
// FirstDropped if it is the first.
func (t *Tally) droppedRR(rr dns.RR) {
	if t.FirstDropped == nil {
		t.FirstDropped = rr
	}
	t.dropped(rr.Header().Rrtype, 1)
}

// drop counts rr, left out of the view by act, one of the drop actions.
func (t *Tally) drop(act action, rr dns.RR) {
	switch act {
	case dropAddr, dropData:
		t.droppedRR(rr)
	case dropHidden:
		t.Hidden++
	case dropRegistry:
		t.DroppedTXT++
	}
}

func (t *Tally) addRare(typ uint16, rewritten bool, n int) {
	for i := range t.Rare {
		if c := &t.Rare[i]; c.Type == typ && c.Rewritten == rewritten {
			c.N += n
			return
		}
	}
	t.Rare = append(t.Rare, typeCount{typ, rewritten, n})
}
