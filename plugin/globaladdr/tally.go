package globaladdr

import "github.com/miekg/dns"

// tally counts what one rewrite did, for the metrics. A and AAAA records and
// ownership records, the bulk of them, have fields of their own; the rest
// (SVCB and HTTPS hints, records dropped for an address in their data) are
// counted by type in rare, which is nil unless they occur.
type tally struct {
	rewrittenA, rewrittenAAAA int
	droppedA, droppedAAAA     int
	droppedTXT                int
	hidden                    int
	rare                      []typeCount
}

// typeCount is a count of records of one type, rewritten or dropped.
type typeCount struct {
	typ       uint16
	rewritten bool
	n         int
}

// empty reports whether the rewrite counted nothing.
func (t *tally) empty() bool {
	return t.rewrittenA+t.rewrittenAAAA+t.droppedA+t.droppedAAAA+t.droppedTXT+t.hidden == 0 && len(t.rare) == 0
}

// rewritten counts a rewritten record of type typ.
func (t *tally) rewritten(typ uint16) {
	switch typ {
	case dns.TypeA:
		t.rewrittenA++
	case dns.TypeAAAA:
		t.rewrittenAAAA++
	default:
		t.addRare(typ, true, 1)
	}
}

// dropped counts n dropped records (or, for SVCB and HTTPS, hint
// addresses) of type typ.
func (t *tally) dropped(typ uint16, n int) {
	switch typ {
	case dns.TypeA:
		t.droppedA += n
	case dns.TypeAAAA:
		t.droppedAAAA += n
	default:
		t.addRare(typ, false, n)
	}
}

// drop counts rr, left out of the view by act, one of the drop actions.
func (t *tally) drop(act action, rr dns.RR) {
	switch act {
	case dropAddr, dropData:
		t.dropped(rr.Header().Rrtype, 1)
	case dropHidden:
		t.hidden++
	case dropRegistry:
		t.droppedTXT++
	}
}

func (t *tally) addRare(typ uint16, rewritten bool, n int) {
	for i := range t.rare {
		if c := &t.rare[i]; c.typ == typ && c.rewritten == rewritten {
			c.n += n
			return
		}
	}
	t.rare = append(t.rare, typeCount{typ, rewritten, n})
}
