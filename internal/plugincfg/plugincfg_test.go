package plugincfg

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	plugins, err := Parse(strings.NewReader("# comment\n\ncache:cache\nprometheus:metrics\non:github.com/coredns/caddy/onevent\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Plugin{
		{"cache", "github.com/coredns/coredns/plugin/cache"},
		{"prometheus", "github.com/coredns/coredns/plugin/metrics"},
		{"on", "github.com/coredns/caddy/onevent"},
	}
	if len(plugins) != len(want) {
		t.Fatalf("got %v, want %v", plugins, want)
	}
	for i := range want {
		if plugins[i] != want[i] {
			t.Errorf("line %d: got %v, want %v", i, plugins[i], want[i])
		}
	}
}

func TestParseErrors(t *testing.T) {
	for input, want := range map[string]string{
		"cache\n":                    `line 1: "cache" is not directive:package`,
		"cache:cache\ncache:cache\n": `line 2: directive "cache" listed twice`,
		":cache\n":                   `line 1`,
	} {
		if _, err := Parse(strings.NewReader(input)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): error %v, want %q", input, err, want)
		}
	}
}
