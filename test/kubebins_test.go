package test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// kubeBinDir is where `make kube-bins` and `make externaldns-bin` put the
// programs the pipeline test drives, relative to the repository's root:
// kube-apiserver and kubectl from k8s.io/kubernetes, as
// test/kubernetes/go.mod pins them, and external-dns, the release
// test/externaldns/latest pins (externalDNSSource).
const kubeBinDir = "bin/kube"

// kubeBin returns the path of the program name in kubeBinDir, or ends t
// through prereq.Missing when it has not been built.
func kubeBin(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(repoRoot(t), kubeBinDir, name)
	if _, err := os.Stat(path); err != nil {
		prereq.Missing(t, "%s is not built: run make kube-bins externaldns-bin (%v)", name, err)
	}
	return path
}
