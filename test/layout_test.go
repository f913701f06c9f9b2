package test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/filepairs"
)

// maxFilePairs is the number of file pairs (package filepairs) of CoreDNS's
// most tangled plugin, kubernetes (v1.15.0).
const maxFilePairs = 8

// corednsModuleDir returns the directory of the CoreDNS release go.mod
// requires, in the module cache: its own source tree.
func corednsModuleDir(t *testing.T) string {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coredns/coredns").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/coredns/coredns: %v", err)
	}
	return strings.TrimSpace(string(dir))
}

// TestFilePairs holds every package under plugin/ to the file pairs of
// CoreDNS's kubernetes plugin: a reader of one file of a package should not
// have to read most of the others (issue 46). The measure is checked
// against CoreDNS's own plugins first.
func TestFilePairs(t *testing.T) {
	coredns := corednsModuleDir(t)
	for plugin, want := range map[string]int{"kubernetes": maxFilePairs, "etcd": 1, "transfer": 0} {
		if pairs, err := filepairs.Of(filepath.Join(coredns, "plugin", plugin)); err != nil || len(pairs) != want {
			t.Errorf("CoreDNS's %s plugin: %d file pairs (%v), want %d: the measure changed", plugin, len(pairs), err, want)
		}
	}
	err := filepath.WalkDir("../plugin", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		pairs, err := filepairs.Of(path)
		if err != nil {
			return err
		}
		if len(pairs) > maxFilePairs {
			pkg := strings.TrimPrefix(filepath.ToSlash(path), "../")
			t.Errorf("%s: %d pairs of files use each other's names, more than %d:\n%s", pkg, len(pairs), maxFilePairs, pairsText(pairs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pairsText lists pairs, one a line.
func pairsText(pairs []filepairs.Pair) string {
	var b strings.Builder
	for _, p := range pairs {
		b.WriteString("\t" + p.String() + "\n")
	}
	return b.String()
}

// TestNoImportUpward holds every package under plugin/ to import no package
// above it (etcdzone/zone may not import etcdzone): a sub-package is a room
// of its own, which its parent uses.
func TestNoImportUpward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "../plugin/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if strings.HasPrefix(fields[0], imp+"/") {
				t.Errorf("%s imports %s, above it", fields[0], imp)
			}
		}
	}
}

// TestPackageTable holds CONTRIBUTING.md's package table to the tree: every
// package of the module has its row, and every row its package.
func TestPackageTable(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	packages := map[string]bool{}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		packages[filepath.ToSlash(rel)] = true
	}
	b, err := os.ReadFile("../CONTRIBUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if pkg, ok := strings.CutPrefix(line, "| `"); ok {
			pkg, _, _ = strings.Cut(pkg, "`")
			rows[pkg] = true
			if !packages[pkg] {
				t.Errorf("CONTRIBUTING.md's package table has %s, which is no package", pkg)
			}
		}
	}
	for pkg := range packages {
		if !rows[pkg] {
			t.Errorf("CONTRIBUTING.md's package table lacks %s", pkg)
		}
	}
}
