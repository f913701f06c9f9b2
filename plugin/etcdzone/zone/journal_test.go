package zone

import (
	"fmt"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
)

// TestJournalBounds fills a journal past its bounds: the oldest changes go
// first, and an IXFR from a serial it no longer holds finds none.
func TestJournalBounds(t *testing.T) {
	soa := func(serial uint32) *dns.SOA {
		return test.SOA(fmt.Sprintf("example.com. 300 IN SOA ns1.example.net. hostmaster.example.com. %d 3600 600 1209600 300", serial))
	}
	rr := test.A("a.example.com. 300 IN A 192.0.2.1")
	j := NewJournal(3, 1<<20)
	for s := uint32(1); s <= 4; s++ {
		j.Add(Delta{From: soa(s), To: soa(s + 1), Added: []dns.RR{rr}})
	}
	if _, ok := j.since(1); ok {
		t.Error("serial 1: the journal should have dropped it")
	}
	if changes, ok := j.since(2); !ok || len(changes) != 3 || changes[2].To.Serial != 5 {
		t.Errorf("serial 2: %v, %v", changes, ok)
	}
	j.Add(Delta{From: soa(5), To: soa(6), Added: []dns.RR{rr, rr, rr, rr}})
	if _, ok := j.since(5); ok {
		t.Error("a change larger than the journal is held")
	}
	j = NewJournal(100, 2*(dns.Len(soa(1))*2))
	for s := uint32(1); s <= 3; s++ {
		j.Add(Delta{From: soa(s), To: soa(s + 1)})
	}
	if _, ok := j.since(1); ok {
		t.Error("the journal holds more bytes than its bound")
	}
	j = NewJournal(0, 1<<20)
	j.Add(Delta{From: soa(1), To: soa(2)})
	if _, ok := j.since(1); ok {
		t.Error("a journal of no records holds a change")
	}
}
