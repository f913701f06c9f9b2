package core

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/core/dnsserver"

	"github.com/globaladdr/globaladdr/internal/plugincfg"
)

func readPluginCfg(t *testing.T, path string) []plugincfg.Plugin {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plugins, err := plugincfg.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return plugins
}

// TestGeneratedFilesMatchPluginCfg fails when plugin.cfg changed without
// `go generate ./...`, or a generated file was edited by hand.
func TestGeneratedFilesMatchPluginCfg(t *testing.T) {
	plugins := readPluginCfg(t, "../plugin.cfg")
	for file, render := range map[string]func(string, []plugincfg.Plugin) ([]byte, error){
		"zplugin.go":     plugincfg.RenderImports,
		"zdirectives.go": plugincfg.RenderDirectives,
	} {
		want, err := render("core", plugins)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from plugin.cfg: run `go generate ./...`", file)
		}
	}
}

// TestDirectivesAreInstalled checks that importing core gives CoreDNS
// plugin.cfg's order.
func TestDirectivesAreInstalled(t *testing.T) {
	if !slices.Equal(dnsserver.Directives, directives) {
		t.Errorf("dnsserver.Directives is not plugin.cfg's list:\n%v", dnsserver.Directives)
	}
}

// TestGlobaladdrPlace asserts the chain position DESIGN.md argues for: below
// cache and dnssec, above every plugin that produces answers.
func TestGlobaladdrPlace(t *testing.T) {
	at := func(name string) int {
		i := slices.Index(directives, name)
		if i < 0 {
			t.Fatalf("%s is not in plugin.cfg", name)
		}
		return i
	}
	g := at("globaladdr")
	for _, above := range []string{"cache", "dnssec"} {
		if at(above) > g {
			t.Errorf("%s must come before globaladdr", above)
		}
	}
	for _, below := range []string{"tls", "minimal", "template", "transfer", "hosts", "k8s_external", "kubernetes", "file", "auto", "etcd", "forward"} {
		if at(below) < g {
			t.Errorf("%s must come after globaladdr", below)
		}
	}
	if directives[g-1] != "dnssec" {
		t.Errorf("globaladdr comes right after %s, want dnssec", directives[g-1])
	}
}

// TestRRLPlace asserts rrl's place: right above cache, so that cached
// answers are limited too, and so above globaladdr, whose rewritten replies
// it accounts for.
func TestRRLPlace(t *testing.T) {
	r := slices.Index(directives, "rrl")
	if r < 0 || r+1 >= len(directives) || directives[r+1] != "cache" {
		t.Errorf("rrl must come right before cache: %v", directives)
	}
	if g := slices.Index(directives, "globaladdr"); r > g {
		t.Error("rrl must come before globaladdr")
	}
}

// TestEtcdzonePlace asserts etcdzone's place: right below globaladdr, so
// that its answers and the transfers it feeds are rewritten, and above
// transfer, which asks it for the zone, and etcd, whose zones it answers.
func TestEtcdzonePlace(t *testing.T) {
	x := slices.Index(directives, "etcdzone")
	if x < 1 || directives[x-1] != "globaladdr" {
		t.Errorf("etcdzone must come right after globaladdr: %v", directives)
	}
	for _, below := range []string{"transfer", "etcd"} {
		if slices.Index(directives, below) < x {
			t.Errorf("%s must come after etcdzone", below)
		}
	}
}

// TestTSIGTimePlace asserts tsigtime's place: above every plugin that
// records or changes the reply, which would not see the bytes it writes,
// and above tsig, whose error answers it mends.
func TestTSIGTimePlace(t *testing.T) {
	x := slices.Index(directives, "tsigtime")
	if x < 0 {
		t.Fatal("tsigtime is not in plugin.cfg")
	}
	for _, below := range []string{"nsid", "trace", "prometheus", "errors", "log", "dnstap", "tsig", "rrl"} {
		if slices.Index(directives, below) < x {
			t.Errorf("%s must come after tsigtime", below)
		}
	}
}

// TestCookiePlace asserts cookie's place: below the plugins that record the
// reply (and tsigtime, which packs some replies), above every plugin that
// answers.
func TestCookiePlace(t *testing.T) {
	c := slices.Index(directives, "cookie")
	if c < 0 {
		t.Fatal("cookie is not in plugin.cfg")
	}
	for _, above := range []string{"tsigtime", "prometheus", "log", "dnstap"} {
		if slices.Index(directives, above) > c {
			t.Errorf("%s must come before cookie", above)
		}
	}
	for _, below := range []string{"local", "any", "chaos", "tsig", "acl", "rrl", "cache", "globaladdr", "etcdzone", "transfer", "file", "etcd", "forward", "whoami"} {
		if slices.Index(directives, below) < c {
			t.Errorf("%s must come after cookie", below)
		}
	}
}

// TestPluginCfgIsCoreDNSList checks that plugin.cfg is the plugin list of
// the CoreDNS module in go.mod, with this repository's plugins added and
// nothing else.
func TestPluginCfgIsCoreDNSList(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coredns/coredns").Output()
	if err != nil {
		t.Skipf("cannot locate the CoreDNS module: %v", err)
	}
	upstream := readPluginCfg(t, filepath.Join(strings.TrimSpace(string(out)), "plugin.cfg"))
	ours := slices.DeleteFunc(readPluginCfg(t, "../plugin.cfg"), func(p plugincfg.Plugin) bool {
		return strings.HasPrefix(p.Import, "github.com/globaladdr/globaladdr/plugin/")
	})
	if !slices.Equal(ours, upstream) {
		t.Errorf("plugin.cfg without globaladdr is not CoreDNS's list:\nours     %v\nupstream %v", ours, upstream)
	}
}
