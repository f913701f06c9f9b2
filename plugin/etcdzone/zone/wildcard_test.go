package zone

import "testing"

// TestWildcard checks RFC 4592: a wildcard answers the names below it that
// do not exist, with their own name, and neither those that exist nor those
// below an empty non-terminal.
func TestWildcard(t *testing.T) {
	v := build(newTestIndex(t,
		"*.apps.example.com. 300 IN A 192.0.2.80",
		"real.apps.example.com. 300 IN TXT \"here\"",
		"x.ent.apps.example.com. 300 IN A 192.0.2.81",
	), nil)
	check(t, v, map[string]string{
		"shop.apps.example.com. A":   "NOERROR\n;\nshop.apps.example.com.\t300\tIN\tA\t192.0.2.80\n;\n;",
		"a.b.apps.example.com. A":    "NOERROR\n;\na.b.apps.example.com.\t300\tIN\tA\t192.0.2.80\n;\n;",
		"shop.apps.example.com. TXT": "NOERROR\n;\n;\n" + soaLine + "\n;",
		"real.apps.example.com. A":   "NOERROR\n;\n;\n" + soaLine + "\n;",
		"ent.apps.example.com. A":    "NOERROR\n;\n;\n" + soaLine + "\n;",
		"apps.example.com. A":        "NOERROR\n;\n;\n" + soaLine + "\n;",
	})
}
