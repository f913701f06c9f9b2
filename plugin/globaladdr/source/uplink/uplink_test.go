package uplink

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
)

// newUplink returns an uplink named name at priority, with the default
// holds.
func newUplink(name string, priority int) *Uplink {
	return &Uplink{Name: name, Priority: priority, failover: defaultFailover, failback: defaultFailback}
}

var errDead = errors.New("dead")

// TestObserveHysteresis holds an uplink to its holds: down after failover
// failed rounds in a row (a good one between resets the count), up again
// after failback good rounds in a row.
func TestObserveHysteresis(t *testing.T) {
	u := newUplink("wan1", DefaultPriority)
	steps := []struct {
		err  error
		up   bool
		move bool
	}{
		{errDead, true, false}, {errDead, true, false}, {nil, true, false}, // reset
		{errDead, true, false}, {errDead, true, false}, {errDead, false, true},
		{nil, false, false}, {nil, false, false}, {errDead, false, false}, // reset
		{nil, false, false}, {nil, false, false}, {nil, false, false}, {nil, false, false}, {nil, true, true},
		{nil, true, false},
	}
	for i, s := range steps {
		if moved := u.Observe(s.err); moved != s.move || u.Up() != s.up {
			t.Fatalf("round %d (%v): up %v, changed %v; want up %v, changed %v", i, s.err, u.Up(), moved, s.up, s.move)
		}
	}
}

// TestFlappingBound is the README's bound: a link that fails and comes
// back at every round moves the state never; one that is cut and restored
// in any pattern moves it at most twice per failover+failback rounds.
func TestFlappingBound(t *testing.T) {
	u := newUplink("wan1", DefaultPriority)
	moves := 0
	for i := range 30 { // a minute at every 2s: one round cut, one restored
		err := errDead
		if i%2 == 1 {
			err = nil
		}
		if u.Observe(err) {
			moves++
		}
	}
	if moves != 0 {
		t.Errorf("flapping at every round: %d moves, want 0", moves)
	}
	// The worst pattern: cut for failover rounds, restored for failback.
	moves = 0
	const rounds = 30
	for i := range rounds {
		err := errDead
		if i%(defaultFailover+defaultFailback) >= defaultFailover {
			err = nil
		}
		if u.Observe(err) {
			moves++
		}
	}
	if bound := 2 * (rounds/(defaultFailover+defaultFailback) + 1); moves > bound {
		t.Errorf("the worst flapping: %d moves in %d rounds, over the bound %d", moves, rounds, bound)
	}
	t.Logf("the worst flapping: %d moves in %d rounds", moves, rounds)
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// down returns u after enough failed rounds to be down.
func down(u *Uplink) *Uplink {
	for range u.failover {
		u.Observe(errDead)
	}
	return u
}

// TestChoose holds the union to the uplinks' states and priorities.
func TestChoose(t *testing.T) {
	v4a, v4b, v6a := "203.0.113.10", "198.51.100.10", "2001:db8::10"
	cases := []struct {
		name   string
		offers []Offer
		last   []netip.Addr
		want   []netip.Addr
	}{
		{"both up: the merge", []Offer{{newUplink("a", 1), addrs(v4a)}, {newUplink("b", 1), addrs(v4b)}}, nil, addrs(v4a, v4b)},
		{"one down: the other alone", []Offer{{down(newUplink("a", 1)), addrs(v4a)}, {newUplink("b", 1), addrs(v4b)}}, addrs(v4a, v4b), addrs(v4b)},
		{"both down: the last served stay", []Offer{{down(newUplink("a", 1)), addrs(v4a)}, {down(newUplink("b", 1)), addrs(v4b)}}, addrs(v4b), addrs(v4b)},
		{"both down, nothing served yet: all", []Offer{{down(newUplink("a", 1)), addrs(v4a)}, {down(newUplink("b", 1)), addrs(v4b)}}, nil, addrs(v4a, v4b)},
		{"standby: the first priority alone", []Offer{{newUplink("fibre", 1), addrs(v4a)}, {newUplink("lte", 2), addrs(v4b)}}, nil, addrs(v4a)},
		{"standby: the second while the first is down", []Offer{{down(newUplink("fibre", 1)), addrs(v4a)}, {newUplink("lte", 2), addrs(v4b)}}, addrs(v4a), addrs(v4b)},
		{"per family: the standby's IPv6, which the first lacks", []Offer{{newUplink("fibre", 1), addrs(v4a)}, {newUplink("lte", 2), addrs(v4b, v6a)}}, nil, addrs(v4a, v6a)},
		{"a line of no uplink is always up", []Offer{{nil, addrs(v4a)}, {down(newUplink("b", 1)), addrs(v4b)}}, nil, addrs(v4a)},
		{"a down uplink's IPv6 stays when no other gives IPv6", []Offer{{down(newUplink("a", 1)), addrs(v4a, v6a)}, {newUplink("b", 1), addrs(v4b)}}, addrs(v4a, v6a, v4b), addrs(v6a, v4b)},
	}
	for _, c := range cases {
		var ch Chooser
		if got := ch.Choose(c.offers, c.last); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
