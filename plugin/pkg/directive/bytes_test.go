package directive

import "testing"

// TestBytes reads sizes as the Corefile gives them.
func TestBytes(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "4096": 4096, "8KiB": 8 << 10, "32MiB": 32 << 20, "1024MiB": 1 << 30} {
		if n, ok := Bytes(s); !ok || n != want {
			t.Errorf("Bytes(%q) = %d, %v; want %d", s, n, ok, want)
		}
	}
	for _, s := range []string{"", "-1", "1025MiB", "1GiB", "2kib", "1.5MiB", "MiB"} {
		if n, ok := Bytes(s); ok {
			t.Errorf("Bytes(%q) = %d, want refused", s, n)
		}
	}
}
