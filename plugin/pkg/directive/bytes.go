package directive

import (
	"strconv"
	"strings"
)

// Bytes reads a size in bytes as the Corefile gives it: a number, or one
// with the suffix KiB or MiB, up to 1024MiB. It reports false for anything
// else.
func Bytes(s string) (int, bool) {
	number, unit := s, 1
	for suffix, u := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			number, unit = n, u
		}
	}
	n, err := strconv.Atoi(number)
	if err != nil || n < 0 || n > 1<<30/unit {
		return 0, false
	}
	return n * unit, true
}
