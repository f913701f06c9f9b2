package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// externalDNSModule is the module of the external-dns release the tests
// run: the one test/externaldns/latest pins, which `make externaldns-bin`
// builds bin/kube/external-dns from.
const externalDNSModule = "sigs.k8s.io/external-dns"

// externalDNSSource returns the directory of the source of the external-dns
// release test/externaldns/latest pins, in the module cache where `make
// externaldns-bin` downloaded it, and the release's version. It reads
// go.mod itself rather than asking go list, which that module's Go 1.27
// would make fetch a toolchain; t ends through prereq.Missing when the
// source is not there.
func externalDNSSource(t *testing.T) (dir, version string) {
	t.Helper()
	path := filepath.Join(repoRoot(t), "test", "externaldns", "latest", "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == externalDNSModule {
			version = r.Mod.Version
		}
	}
	if version == "" {
		t.Fatalf("%s does not require %s", path, externalDNSModule)
	}
	escaped, err := module.EscapePath(externalDNSModule)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir = filepath.Join(strings.TrimSpace(string(out)), escaped+"@"+version)
	if _, err := os.Stat(dir); err != nil {
		prereq.Missing(t, "external-dns %s's module source is not in the module cache: run make externaldns-bin (%v)", version, err)
	}
	return dir, version
}
