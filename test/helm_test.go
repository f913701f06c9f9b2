package test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// helmBin is where `make helm` puts the helm command, relative to the
// repository's root (test/helm/go.mod pins its version).
const helmBin = "bin/helm/helm"

// chartDir is the chart, relative to this package.
const chartDir = "../charts/globaladdr"

// helmRelease is the release name the tests render the chart as.
const helmRelease = "globaladdr"

// helm returns the path of the helm command, or ends t through
// prereq.Missing when it has not been built.
func helm(t *testing.T) string {
	t.Helper()
	path := filepath.Join(repoRoot(t), helmBin)
	if _, err := os.Stat(path); err != nil {
		prereq.Missing(t, "helm is not built: run make helm (%v)", err)
	}
	return path
}

// runHelm runs helm with args and returns its standard output; t fails at
// once when helm fails. Its standard error, which holds warnings such as
// the one for the chart's links to monitoring/, is logged only then.
func runHelm(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, helm(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// helmTemplate renders the chart as helmRelease in the default namespace
// with the values files, each over the ones before it, and returns the
// manifests.
func helmTemplate(t *testing.T, valuesFiles ...string) string {
	t.Helper()
	args := []string{"template", helmRelease, chartDir, "--namespace", "default"}
	for _, f := range valuesFiles {
		args = append(args, "--values", f)
	}
	return runHelm(t, args...)
}

// chartValuesFiles returns the values files of the chart's ci/ directory.
func chartValuesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files in %s/ci: %v", chartDir, err)
	}
	return files
}

// TestHelmLint runs `helm lint --strict` on the chart with its default
// values and with each values file of ci/: warnings fail too.
func TestHelmLint(t *testing.T) {
	runHelm(t, "lint", "--strict", chartDir)
	for _, f := range chartValuesFiles(t) {
		runHelm(t, "lint", "--strict", chartDir, "--values", f)
	}
}
