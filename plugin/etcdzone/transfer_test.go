package etcdzone

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/poll"

	"github.com/miekg/dns"
)

// TestTransferIncremental adds a record and deletes it: an IXFR from the
// first serial gets both changes, each with its SOA records (RFC 1995), one
// from the second serial the last change, and one from a serial the journal
// never held the whole zone.
func TestTransferIncremental(t *testing.T) {
	x, s := newTestZone(t, zoneRecords...)
	z := x.zones[0]
	serialOf := func() uint32 { return z.Current().SOA().Serial }
	first := serialOf()
	waitMove := func(from uint32) uint32 {
		t.Helper()
		poll.Until(t, 10*time.Second, "the serial moves", func() error {
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
