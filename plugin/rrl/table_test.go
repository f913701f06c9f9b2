package rrl

import (
	"math/rand/v2"
	"testing"
)

const second = int64(nano)

// verdicts debits key n times at now and returns the verdicts.
func verdicts(t *table, key uint64, now int64, n, rate, window, slipEvery int) []verdict {
	var vs []verdict
	for range n {
		v, _, _ := t.debit(key, now, rate, window, slipEvery)
		vs = append(vs, v)
	}
	return vs
}

func count(vs []verdict, want verdict) int {
	n := 0
	for _, v := range vs {
		if v == want {
			n++
		}
	}
	return n
}

// TestAccount follows BIND's accounting: a new account holds rate credits,
// earns rate per second, and the responses beyond are dropped but for every
// slip-th, which slips.
func TestAccount(t *testing.T) {
	tb := newTable(10)
	vs := verdicts(tb, 1, 0, 20, 5, 15, 2)
	want := []verdict{send, send, send, send, send, drop, slip, drop, slip, drop, slip, drop, slip, drop, slip, drop, slip, drop, slip, drop}
	for i := range want {
		if vs[i] != want[i] {
			t.Fatalf("verdicts %v, want %v", vs, want)
		}
	}
	// Half a second later the account has earned 2.5 credits, but it is 15
	// in debt: still limited.
	if v, started, _ := tb.debit(1, second/2, 5, 15, 0); v != drop || started {
		t.Errorf("after half a second in debt: %v (started %v), want a drop of an account already limited", v, started)
	}
}

// TestAccountWindow checks that the debt is at most rate × window: after a
// flood, the answers come back within window seconds, not before the debt
// is paid.
func TestAccountWindow(t *testing.T) {
	const rate, window = 10, 5
	tb := newTable(10)
	vs := verdicts(tb, 1, 0, 10000, rate, window, 0) // a flood: far beyond the debt's floor
	if got := count(vs, send); got != rate {
		t.Fatalf("%d sent in the first instant, want %d", got, rate)
	}
	// The debt is rate × window credits (plus the one just spent): just
	// before window seconds it is not paid.
	if v, _, _ := tb.debit(1, window*second-second/10, rate, window, 0); v != drop {
		t.Errorf("before the window: %v, want drop", v)
	}
	// That debit spent a credit too; one second after the window the
	// account has rate credits again (at most rate: no saving up).
	vs = verdicts(tb, 1, (window+2)*second, 2*rate, rate, window, 0)
	if got := count(vs, send); got != rate {
		t.Errorf("after the window: %d sent, want %d", got, rate)
	}
}

// TestAccountRate checks the steady state: a client below the rate is
// never limited; one at twice the rate spends its first second's credit and
// then stays limited, since its debt grows faster than it is paid (as in
// BIND: the rate is a threshold, not a quota).
func TestAccountRate(t *testing.T) {
	const rate = 20
	tb := newTable(10)
	for i := range rate * 10 { // 10 s at just under the rate
		if v, _, _ := tb.debit(7, int64(i)*second/(rate-1), rate, 15, 0); v != send {
			t.Fatalf("query %d below the rate: %v", i, v)
		}
	}
	sent, last := 0, int64(0)
	for i := range 2 * rate * 10 { // 10 s at twice the rate
		now := int64(i) * second / (2 * rate)
		if v, _, _ := tb.debit(8, now, rate, 15, 0); v == send {
			sent, last = sent+1, now
		}
	}
	if sent < 2*rate-1 || sent > 2*rate+1 || last > second+second/10 {
		t.Errorf("at twice the rate: %d sent, the last at %v s; want about %d, all in the first second", sent, float64(last)/nano, 2*rate)
	}
}

// TestAccountStarted checks that started marks the first limited response
// of a burst only.
func TestAccountStarted(t *testing.T) {
	tb := newTable(10)
	var starts int
	for burst := range 3 { // three bursts, each after the debt is paid
		for range 10 {
			if _, started, _ := tb.debit(1, int64(burst)*100*second, 2, 15, 2); started {
				starts++
			}
		}
	}
	if starts != 3 {
		t.Errorf("%d starts in 3 bursts", starts)
	}
}

// TestTableBound checks that the table never holds more than its size,
// evicts the least recently used account first, and finds every account it
// holds after any number of evictions (the index's deletions).
func TestTableBound(t *testing.T) {
	const size = 100
	tb := newTable(size)
	rng := rand.New(rand.NewPCG(1, 2))
	held := map[uint64]bool{}
	var order []uint64 // least recently used first
	touch := func(k uint64) {
		for i, o := range order {
			if o == k {
				order = append(order[:i], order[i+1:]...)
				break
			}
		}
		order = append(order, k)
	}
	for i := range 20000 {
		// Few keys, so that hits, misses and evictions mix; small ones
		// collide in the index's home slots.
		k := rng.Uint64N(300)
		if i%3 == 0 {
			k = rng.Uint64() // a fresh key
		}
		_, _, grew := tb.debit(k, int64(i), 1000, 15, 0)
		if grew != (len(held) < size && !held[k]) {
			t.Fatalf("step %d: grew %v with %d held", i, grew, len(held))
		}
		if !held[k] && len(held) == size {
			delete(held, order[0])
			order = order[1:]
		}
		held[k] = true
		touch(k)
		if tb.len() > size {
			t.Fatalf("step %d: %d accounts, more than %d", i, tb.len(), size)
		}
	}
	if tb.len() != size {
		t.Errorf("%d accounts, want %d", tb.len(), size)
	}
	for k := range held {
		if !tb.holds(k) {
			t.Errorf("account %d is lost", k)
		}
	}
	if tb.accounts[tb.tail].key != order[0] || tb.accounts[tb.head].key != order[len(order)-1] {
		t.Error("the list is not in order of use")
	}
}

// holds reports whether the index finds key, for the tests.
func (t *table) holds(key uint64) bool {
	for slot := key & t.mask; t.index[slot] != 0; slot = (slot + 1) & t.mask {
		if t.accounts[t.index[slot]-1].key == key {
			return true
		}
	}
	return false
}

// TestTableDoesNotAllocate asserts the per-query cost of the table: no
// allocation once it is full, whether a query hits an account or evicts one.
func TestTableDoesNotAllocate(t *testing.T) {
	tb := newTable(1000)
	for k := range uint64(1000) {
		tb.debit(k, 0, 10, 15, 2)
	}
	var k uint64
	if n := testing.AllocsPerRun(10000, func() { k++; tb.debit(k%1000, int64(k), 10, 15, 2) }); n != 0 {
		t.Errorf("%v allocations per hit", n)
	}
	if n := testing.AllocsPerRun(10000, func() { k++; tb.debit(k*2654435761, int64(k), 10, 15, 2) }); n != 0 {
		t.Errorf("%v allocations per eviction", n)
	}
	if tb.len() != 1000 {
		t.Errorf("%d accounts, want 1000", tb.len())
	}
}
