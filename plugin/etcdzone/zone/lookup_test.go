package zone

import "testing"

// TestLookup asks for names that exist, names that don't, types a name
// lacks, an empty non-terminal, CNAMEs in the zone, and the apex.
func TestLookup(t *testing.T) {
	v := build(newTestIndex(t,
		"app.example.com. 300 IN A 192.0.2.1",
		"www.example.com. 300 IN CNAME app.example.com.",
		"a.b.deep.example.com. 300 IN A 192.0.2.2",
		`info.example.com. 300 IN TXT "hello"`,
	), nil)
	check(t, v, map[string]string{
		"app.example.com. A":      "NOERROR\n;\napp.example.com.\t300\tIN\tA\t192.0.2.1\n;\n;",
		"app.example.com. AAAA":   "NOERROR\n;\n;\n" + soaLine + "\n;",
		"none.example.com. A":     "NXDOMAIN\n;\n;\n" + soaLine + "\n;",
		"www.example.com. A":      "NOERROR\n;\napp.example.com.\t300\tIN\tA\t192.0.2.1\nwww.example.com.\t300\tIN\tCNAME\tapp.example.com.\n;\n;",
		"www.example.com. TXT":    "NOERROR\n;\nwww.example.com.\t300\tIN\tCNAME\tapp.example.com.\n;\n" + soaLine + "\n;",
		"b.deep.example.com. A":   "NOERROR\n;\n;\n" + soaLine + "\n;",
		"example.com. NS":         "NOERROR\n;\nexample.com.\t3600\tIN\tNS\tns1.example.net.\n;\n;",
		"example.com. SOA":        "NOERROR\n;\n" + soaLine + "\n;\n;",
		"info.example.com. TXT":   "NOERROR\n;\ninfo.example.com.\t300\tIN\tTXT\t\"hello\"\n;\n;",
		"x.app.example.com. A":    "NXDOMAIN\n;\n;\n" + soaLine + "\n;",
		"deep.example.com. A":     "NOERROR\n;\n;\n" + soaLine + "\n;",
		"a.b.deep.example.com. A": "NOERROR\n;\na.b.deep.example.com.\t300\tIN\tA\t192.0.2.2\n;\n;",
	})
}

// TestEmptyZone checks that a zone without records has its apex.
func TestEmptyZone(t *testing.T) {
	check(t, build(NewIndex(nil), nil), map[string]string{
		"example.com. A":     "NOERROR\n;\n;\n" + soaLine + "\n;",
		"app.example.com. A": "NXDOMAIN\n;\n;\n" + soaLine + "\n;",
	})
}
