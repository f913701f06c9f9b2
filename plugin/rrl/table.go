package rrl

import (
	"math/bits"
	"sync"
)

// nano is one credit in the table's unit: a rate of r responses per second
// earns r units per nanosecond, so credits accrue without rounding.
const nano = 1e9

// verdict is what the table says about one response.
type verdict uint8

const (
	send verdict = iota
	slip
	drop
)

// account is the balance of one client prefix and response class. Like
// BIND's, it holds at most one second's worth of credits (rate), is credited
// rate per second, and falls at most window seconds' worth (rate × window)
// into debt: a client that stops flooding is answered again within window
// seconds.
type account struct {
	key     uint64
	balance int64 // nanocredits
	last    int64 // when last debited, in nanoseconds of the table's clock
	// slips counts the limited responses since the last slipped one.
	slips uint8
	// limited is set while the account is in debt, to log when it starts.
	limited bool
	// prev and next link the accounts from the most recently used to the
	// least; -1 ends the list.
	prev, next int32
}

// table holds at most size accounts, evicting the least recently used one
// to make room. Lookups go through an open-addressing index of int32
// positions, so a lookup, an insertion and an eviction are O(1) and
// allocate nothing once the table is full.
type table struct {
	mu       sync.Mutex
	accounts []account
	// index holds, for each slot, 1 + the position of an account in
	// accounts, or 0 for an empty slot; linear probing.
	index      []int32
	mask       uint64
	head, tail int32 // most and least recently used; -1 when empty
	size       int
}

func newTable(size int) *table {
	slots := uint64(1) << bits.Len64(uint64(2*size-1)) // a power of two ≥ 2 × size
	return &table{
		accounts: make([]account, 0, min(size, 4096)),
		index:    make([]int32, slots),
		mask:     slots - 1,
		head:     -1,
		tail:     -1,
		size:     size,
	}
}

// debit spends one credit of the account key at time now (nanoseconds),
// creating the account if need be; rate is its credits per second, window
// the debt it may run into in seconds, and every slipEvery-th limited
// response slips (0: none). started reports that the account has just begun
// to be limited. grew reports that the table has one more account.
func (t *table) debit(key uint64, now int64, rate, window, slipEvery int) (v verdict, started, grew bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, grew := t.account(key, now, rate)
	perNano := int64(rate)
	elapsed := min(now-a.last, int64(window+1)*nano) // enough to refill from the deepest debt
	if elapsed > 0 {
		a.balance = min(a.balance+perNano*elapsed, perNano*nano)
		a.last = now
	}
	a.balance -= nano
	if a.balance >= 0 {
		a.slips, a.limited = 0, false
		return send, false, grew
	}
	a.balance = max(a.balance, -int64(window)*perNano*nano)
	started, a.limited = !a.limited, true
	if slipEvery > 0 {
		if a.slips++; int(a.slips) >= slipEvery {
			a.slips = 0
			return slip, started, grew
		}
	}
	return drop, started, grew
}

// account returns the account key, moved to the front of the list; a new
// one holds rate credits.
func (t *table) account(key uint64, now int64, rate int) (a *account, grew bool) {
	slot := key & t.mask
	for ; t.index[slot] != 0; slot = (slot + 1) & t.mask {
		if i := t.index[slot] - 1; t.accounts[i].key == key {
			t.toFront(i)
			return &t.accounts[i], false
		}
	}
	var i int32
	if len(t.accounts) < t.size {
		i = int32(len(t.accounts))
		t.accounts = append(t.accounts, account{})
		grew = true
	} else {
		i = t.tail
		t.unlink(i)
		t.remove(t.accounts[i].key)
		slot = key & t.mask // the removal may have shifted the probe
		for t.index[slot] != 0 {
			slot = (slot + 1) & t.mask
		}
	}
	t.index[slot] = i + 1
	t.accounts[i] = account{key: key, balance: int64(rate) * nano, last: now, prev: -1, next: -1}
	t.pushFront(i)
	return &t.accounts[i], grew
}

// remove takes key out of the index, shifting back the entries that probed
// past it, so that no tombstones are needed.
func (t *table) remove(key uint64) {
	slot := key & t.mask
	for t.accounts[t.index[slot]-1].key != key {
		slot = (slot + 1) & t.mask
	}
	hole := slot
	for next := (hole + 1) & t.mask; t.index[next] != 0; next = (next + 1) & t.mask {
		home := t.accounts[t.index[next]-1].key & t.mask
		// The entry at next may fill the hole unless its home slot lies
		// cyclically in (hole, next].
		if (next-home)&t.mask >= (next-hole)&t.mask {
			t.index[hole] = t.index[next]
			hole = next
		}
	}
	t.index[hole] = 0
}

func (t *table) toFront(i int32) {
	if t.head != i {
		t.unlink(i)
		t.pushFront(i)
	}
}

func (t *table) unlink(i int32) {
	a := &t.accounts[i]
	if a.prev >= 0 {
		t.accounts[a.prev].next = a.next
	} else {
		t.head = a.next
	}
	if a.next >= 0 {
		t.accounts[a.next].prev = a.prev
	} else {
		t.tail = a.prev
	}
	a.prev, a.next = -1, -1
}

func (t *table) pushFront(i int32) {
	a := &t.accounts[i]
	a.prev, a.next = -1, t.head
	if t.head >= 0 {
		t.accounts[t.head].prev = i
	}
	t.head = i
	if t.tail < 0 {
		t.tail = i
	}
}

// len returns the number of accounts.
func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.accounts)
}
