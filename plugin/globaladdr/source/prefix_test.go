package source

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/coredns/caddy"
)

func TestPrefixFromFile(t *testing.T) {
	logs := captureLog(t)
	path := filepath.Join(t.TempDir(), "prefix")
	var cfg Config
	c := caddy.NewTestController("dns", "globaladdr")
	from := netip.MustParsePrefix("fd00:0:0:1::/64")
	p, err := cfg.ParseMapFrom(c, from, []string{"file", path})
	if err != nil {
		t.Fatal(err)
	}
	set, err := cfg.New(internal)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range set.feeds {
		f.src.(*fileSource).poll = 10 * time.Millisecond
	}
	changes := make(chan struct{}, 16)
	set.Subscribe(func(Value) { changes <- struct{}{} })
	start(t, set, nil)
	if _, ok := p.Load(); ok {
		t.Fatal("a prefix before the file exists")
	}
	loaded := func() string {
		to, ok := p.Load()
		if !ok {
			return ""
		}
		return to.String()
	}
	write(t, path, "2001:db8:aa:1::/64 # from odhcp6c\n")
	waitFor(t, "the prefix", func() bool { return loaded() == "2001:db8:aa:1::/64" }, loaded)
	<-changes // the subscribers are told

	// A /56: refused, the last good prefix kept.
	write(t, path, "2001:db8:bb::/56\n")
	waitFor(t, "a refusal", func() bool {
		return value(refusedCount.WithLabelValues(testServer, "file "+path, refusedPrefixLength)) > 0
	}, logs.String)
	waitLog(t, logs, "the prefix 2001:db8:bb::/56 is a /56, and fd00:0:0:1::/64 is a /64: write the /64 the LAN uses")
	if loaded() != "2001:db8:aa:1::/64" {
		t.Fatalf("after a /56: %q, want the last good prefix", loaded())
	}
	write(t, path, "2001:db8:bb:7::99\n") // an address: its /64
	waitFor(t, "the new prefix", func() bool { return loaded() == "2001:db8:bb:7::/64" }, loaded)
}

func TestParsePrefixValue(t *testing.T) {
	from := netip.MustParsePrefix("fd00:1:2:3::/64")
	for text, want := range map[string]string{
		"2001:db8:5:6::/64\n":               "2001:db8:5:6::/64",
		"2001:db8:5:6::1/64 # from odhcp6c": "2001:db8:5:6::/64",
		"2001:db8:5:6:a:b:c:d":              "2001:db8:5:6::/64",
		"2001:db8:5::/56":                   "prefix_length",
		"2001:db8:5:6:7::/80":               "prefix_length",
		"fd00:9::/64":                       "ula",
		"fe80::/64":                         "link_local",
		"fd00:1:2:3::/64":                   "ula",
		"203.0.113.0/24":                    "error",
		"":                                  "error",
		"2001:db8::/64 2001:db8:1::/64":     "error",
		"garbage":                           "error",
	} {
		got, reason, err := parsePrefixValue(text, from, internal)
		switch {
		case err == nil && got.String() != want, err != nil && reason == "" && want != "error", err != nil && reason != "" && reason != want:
			t.Errorf("%q: got %v, %q, %v; want %s", text, got, reason, err, want)
		}
	}
}
