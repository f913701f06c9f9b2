package etcdxfr

import (
	"testing"
	"time"
)

func TestSerialBump(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := &serial{value: unixSerial(now), at: now}
	if v := s.bump(now.Add(5 * time.Second)); v != 1_700_000_005 {
		t.Errorf("a change 5 s later: serial %d, want the time", v)
	}
	if v := s.bump(now.Add(5 * time.Second)); v != 1_700_000_006 {
		t.Errorf("a change in the same second: serial %d, want one more", v)
	}
	if v := s.bump(now); v != 1_700_000_007 {
		t.Errorf("a clock gone back: serial %d, want one more", v)
	}
}

func TestNewer(t *testing.T) {
	for _, tc := range []struct {
		a, b uint32
		want bool
	}{{2, 1, true}, {1, 2, false}, {1, 1, false}, {0, 1<<32 - 1, true}, {1 << 31, 0, false}, {1<<31 - 1, 0, true}} {
		if got := newer(tc.a, tc.b); got != tc.want {
			t.Errorf("newer(%d, %d) = %v", tc.a, tc.b, got)
		}
	}
}

func TestSerialRegistry(t *testing.T) {
	s, known := serialOf("dns://:53", "registry.test.")
	if known {
		t.Fatal("a new server and zone are not known")
	}
	if d := time.Since(time.Unix(int64(s.get()), 0)); d < 0 || d > 2*time.Second {
		t.Errorf("a new serial starts at the current time, is %d", s.get())
	}
	again, known := serialOf("dns://:53", "registry.test.")
	if !known || again != s {
		t.Error("a reload must find the serial of the same server and zone")
	}
}
