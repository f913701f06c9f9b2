package zone

import "testing"

// TestSerialAt checks the serial's arithmetic: a revision gives its serial,
// local changes count within its range, and a later revision passes them.
func TestSerialAt(t *testing.T) {
	s := Serial{}.At(100)
	if v := s.Value(); v != 2_000_001_000 {
		t.Errorf("revision 100: serial %d", v)
	}
	if s.At(99) != s || s.At(100) != s {
		t.Error("an earlier revision must not move the serial")
	}
	s = s.Bumped().Bumped()
	if v := s.Value(); v != 2_000_001_002 {
		t.Errorf("two local changes: serial %d", v)
	}
	if v := s.At(101).Value(); v != 2_000_001_010 {
		t.Errorf("the next revision: serial %d, want its own", v)
	}
	for range 10 {
		s = s.Bumped()
	}
	if v := s.At(101).Value(); v != 2_000_001_013 {
		t.Errorf("after twelve local changes, the next revision: serial %d, want one more than before", v)
	}
}

func TestNewer(t *testing.T) {
	for _, tc := range []struct {
		a, b uint32
		want bool
	}{{2, 1, true}, {1, 2, false}, {1, 1, false}, {0, 1<<32 - 1, true}, {1 << 31, 0, false}, {1<<31 - 1, 0, true}} {
		if got := Newer(tc.a, tc.b); got != tc.want {
			t.Errorf("Newer(%d, %d) = %v", tc.a, tc.b, got)
		}
	}
	// The serials above 1.8e9, etcdxfr's in 2027, are newer.
	if !Newer((Serial{rev: 1}).Value(), 1_800_000_000) {
		t.Error("an upgrade from etcdxfr must move the serial forward")
	}
}

// TestReloaded checks the serials kept across reloads: a reload without a
// change in etcd is one more, unless the zone's stamp vouches that the zone
// is the same; with a change it is the new revision's.
func TestReloaded(t *testing.T) {
	first := Reloaded("dns://:53", "reloaded.test.", Serial{rev: 5}, false)
	if first != (Serial{rev: 5}) {
		t.Errorf("the first instance: %v", first)
	}
	again := Reloaded("dns://:53", "reloaded.test.", Serial{rev: 5}, false)
	if again.Value() != first.Value()+1 {
		t.Errorf("a reload without a change: %d, was %d", again.Value(), first.Value())
	}
	if same := Reloaded("dns://:53", "reloaded.test.", again, true); same != again {
		t.Errorf("a reload vouched the same: %d, was %d", same.Value(), again.Value())
	}
	if behind := Reloaded("dns://:53", "reloaded.test.", Serial{rev: 5}, true); behind.Value() != again.Value()+1 {
		t.Errorf("a reload vouched at a serial behind the one published: %d, was %d", behind.Value(), again.Value())
	}
	later := Reloaded("dns://:53", "reloaded.test.", Serial{rev: 9}, false)
	if later != (Serial{rev: 9}) {
		t.Errorf("a reload after a change in etcd: %v", later)
	}
}
