package test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// ownBuildTest is the test that runs docs/coredns-build.md's snippets,
// marked `<!-- tested by TestOwnCoreDNSBuild -->`.
const ownBuildTest = "TestOwnCoreDNSBuild"

// ownBuildEnv is what the test adds to the snippets' environment, for
// CoreDNS's Makefile: this checkout's flags (no build tags, -trimpath, no
// cgo, as make build), so that its go build shares the compile cache with
// ../coredns for every module but the main one: CoreDNS's packages, a main
// module's now, and ours compile anew (36 s on 2 warm cores). Its defaults,
// the tag grpcnotrace and no -trimpath, or the -race run's cgo, would
// compile all 1500 packages anew; nothing of ours depends on grpc's
// tracing, which the tag drops. Its go get adds the checksums of what our
// plugins need to CoreDNS's go.sum, through the module proxy's checksum
// database.
var ownBuildEnv = []string{"GOTAGS=", "BUILDOPTS=-trimpath", "CGO_ENABLED=0"}

// ownBuildTimeout bounds each command of the build, so that a hung
// download fails the test with its output rather than the whole run.
const ownBuildTimeout = 10 * time.Minute

// TestOwnCoreDNSBuild builds CoreDNS from its own source tree, the release
// go.mod requires (its module, from the Go module cache), with our plugins
// added as docs/coredns-build.md says: its snippets run as printed, in order,
// in that tree, beside a link to this checkout. The plugin list they make
// must be plugin.cfg's, and the binary must serve single-process.Corefile's
// two views: the internal address inside, the global one outside.
func TestOwnCoreDNSBuild(t *testing.T) {
	t.Parallel()
	prereq.Program(t, "make", "make")
	prereq.Program(t, "sed", "sed")
	root := repoRoot(t)
	var snippets []string
	file := filepath.Join(root, "docs", "coredns-build.md")
	for _, s := range readSnippets(t, file) {
		if s.TestedBy == ownBuildTest {
			snippets = append(snippets, fmt.Sprintf("# %s:%d\n%s", "docs/coredns-build.md", s.Line, s.Text))
		}
	}
	if len(snippets) != 3 {
		t.Fatalf("docs/coredns-build.md has %d snippets for %s, want 3 (the lines, the module, the build)", len(snippets), ownBuildTest)
	}

	dir := t.TempDir()
	tree := filepath.Join(dir, "coredns")
	runIn(t, dir, nil, "cp", "-r", corednsModuleDir(t), tree)
	runIn(t, dir, nil, "chmod", "-R", "u+w", tree)
	if err := os.Symlink(root, filepath.Join(dir, "globaladdr")); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	runIn(t, tree, ownBuildEnv, "bash", "-e", "-c", strings.Join(snippets, "\n"))
	t.Logf("CoreDNS's tree with our plugins built in %s", time.Since(started).Round(time.Second))

	if got, want := pluginLines(t, filepath.Join(tree, "plugin.cfg")), pluginLines(t, filepath.Join(root, "plugin.cfg")); !slices.Equal(got, want) {
		t.Errorf("the page's plugin.cfg differs from ours:\n got %v\nwant %v", got, want)
	}

	etcd := etcdtest.StartT(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal))
	env, _ := exampleEnv(t, etcd)
	internal, external := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	_, env["INTERNAL_PORT"], _ = net.SplitHostPort(internal)
	_, env["EXTERNAL_PORT"], _ = net.SplitHostPort(external)
	env["HEALTH_PORT"], env["READY_PORT"], env["METRICS_PORT"] = freePort(t), freePort(t), freePort(t)
	conf := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(conf, []byte(readExample(t, "single-process.Corefile")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(tree, "coredns"), "-conf", conf)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := startProgram(t, "own-coredns", cmd, dir)
	p.awaitReady(t, time.Minute, func() error { return answersSOA(external) })
	waitServing(t, internal)
	checkInternal(t, internal)
	checkExternal(t, external)
}

// pluginLines returns the directive lines of the plugin.cfg at path.
func pluginLines(t *testing.T, path string) []string {
	t.Helper()
	var lines []string
	for line := range strings.Lines(readFile(t, path)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines
}

// runIn runs name with args in dir, with env added to the test's
// environment, and fails t with its output if it fails or takes longer
// than ownBuildTimeout.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ownBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
