package etcdzone

import (
	"context"
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
	j := &journal{maxRecords: 3, maxBytes: 1 << 20}
	for s := uint32(1); s <= 4; s++ {
		j.add(delta{from: soa(s), to: soa(s + 1), added: []dns.RR{rr}})
	}
	if _, ok := j.since(1); ok {
		t.Error("serial 1: the journal should have dropped it")
	}
	if changes, ok := j.since(2); !ok || len(changes) != 3 || changes[2].to.Serial != 5 {
		t.Errorf("serial 2: %v, %v", changes, ok)
	}
	j.add(delta{from: soa(5), to: soa(6), added: []dns.RR{rr, rr, rr, rr}})
	if _, ok := j.since(5); ok {
		t.Error("a change larger than the journal is held")
	}
	j = &journal{maxRecords: 100, maxBytes: 2 * (dns.Len(soa(1)) * 2)}
	for s := uint32(1); s <= 3; s++ {
		j.add(delta{from: soa(s), to: soa(s + 1)})
	}
	if _, ok := j.since(1); ok {
		t.Error("the journal holds more bytes than its bound")
	}
}

// TestTransferIncremental adds a record and deletes it: an IXFR from the
// first serial gets both changes, each with its SOA records (RFC 1995), one
// from the second serial the last change, and one from a serial the journal
// never held the whole zone.
func TestTransferIncremental(t *testing.T) {
	x, s := newTestZone(t, zoneRecords...)
	z := x.zones[0]
	serialOf := func() uint32 { return z.current.Load().zone.SOA.Serial }
	first := serialOf()
	waitMove := func(from uint32) uint32 {
		t.Helper()
		eventually(t, "the serial moves", func() error {
			if serialOf() == from {
				return fmt.Errorf("serial still %d", from)
			}
			return nil
		})
		return serialOf()
	}
	const key = "/skydns/com/example/new"
	if _, err := s.Client().Put(context.Background(), key, `{"host":"192.0.2.7"}`); err != nil {
		t.Fatal(err)
	}
	second := waitMove(first)
	if _, err := s.Client().Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	third := waitMove(second)

	transfer := func(from uint32) []string {
		t.Helper()
		ch, err := x.Transfer("example.com.", from)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for batch := range ch {
			for _, rr := range batch {
				if soa, ok := rr.(*dns.SOA); ok {
					out = append(out, fmt.Sprint("SOA ", soa.Serial))
				} else {
					out = append(out, rr.String())
				}
			}
		}
		return out
	}
	soa := func(s uint32) string { return fmt.Sprint("SOA ", s) }
	record := "new.example.com.\t300\tIN\tA\t192.0.2.7"
	for from, want := range map[uint32][]string{
		second: {soa(third), soa(second), record, soa(third), soa(third)},
		first:  {soa(third), soa(first), soa(second), record, soa(second), record, soa(third), soa(third)},
	} {
		if got := transfer(from); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("IXFR from %d:\n got %v\nwant %v", from, got, want)
		}
	}
	if got := transfer(first - 1); len(got) < 10 || got[1] == soa(first-1) {
		t.Errorf("IXFR from a serial before the journal: want the zone, got %v", got)
	}
}
