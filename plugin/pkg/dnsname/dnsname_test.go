package dnsname

import "testing"

func TestIn(t *testing.T) {
	for _, tc := range []struct {
		name, zone string
		want       bool
	}{
		{"example.com.", "example.com.", true},
		{"www.Example.COM.", "example.com.", true},
		{"www.example.com.", ".", true},
		{".", "example.com.", false},
		{"wwwexample.com.", "example.com.", false},
		{"notexample.com.", "example.com.", false},
		{"com.", "example.com.", false},
		{"anything.", ".", true},
		{"example.com.", "www.example.com.", false},
		// One label, "www.example", then com.
		{`www\.example.com.`, "example.com.", false},
		{`www\.example.com.`, "www.example.com.", false},
		{`www\.example.com.`, `www\.example.com.`, true},
		{`a.www\.example.com.`, `www\.example.com.`, true},
		// An escaped backslash ends its label's text; the dot after it
		// ends the label.
		{`www\\.example.com.`, "example.com.", true},
		{`a\\\.example.com.`, "example.com.", false},
	} {
		if got := In(tc.name, tc.zone); got != tc.want {
			t.Errorf("In(%q, %q) = %v, want %v", tc.name, tc.zone, got, tc.want)
		}
	}
}

func TestZones(t *testing.T) {
	m := Set([]string{"example.com", "Sub.Example.com.", "example.net."})
	for _, tc := range []struct{ name, zone string }{
		{"www.sub.example.com.", "sub.example.com."},
		{"WWW.example.com", "example.com."},
		{"example.net.", "example.net."},
		{"example.org.", ""},
	} {
		zone, _, ok := m.Deepest(tc.name)
		if ok != (tc.zone != "") || ok && zone != tc.zone || m.Holds(tc.name) != ok {
			t.Errorf("Deepest(%q) = %q, %v; want %q", tc.name, zone, ok, tc.zone)
		}
	}
	if zone, _, ok := Set([]string{"."}).Deepest("www.example.org."); !ok || zone != "." {
		t.Errorf("the root's Deepest: %q, %v", zone, ok)
	}
}

func TestIsChallenge(t *testing.T) {
	for name, want := range map[string]bool{
		"_acme-challenge.www.example.com.": true,
		"_ACME-Challenge.example.com.":     true,
		"_acme-challenge.":                 false,
		"www._acme-challenge.example.com.": false,
	} {
		if IsChallenge(name) != want {
			t.Errorf("IsChallenge(%q) = %v", name, !want)
		}
	}
}
