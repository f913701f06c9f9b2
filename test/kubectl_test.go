package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// kubectl runs kubectl (from kubeBinDir) against an apiServer, as its
// administrator.
type kubectl struct {
	bin        string
	kubeconfig string
	cacheDir   string // its discovery cache: the test's, not the user's
}

// newKubectl returns a kubectl for api.
func newKubectl(t *testing.T, api *apiServer) *kubectl {
	t.Helper()
	return &kubectl{bin: kubeBin(t, "kubectl"), kubeconfig: api.kubeconfig, cacheDir: t.TempDir()}
}

// try runs kubectl with args, stdin on its standard input, and returns its
// output and whether it failed.
func (k *kubectl) try(stdin []byte, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--kubeconfig=" + k.kubeconfig, "--cache-dir=" + k.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// run is try that fails t at once when kubectl fails.
func (k *kubectl) run(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	out, err := k.try(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// apply creates objects (API types with their TypeMeta set) or updates
// them.
func (k *kubectl) apply(t *testing.T, objects ...any) {
	t.Helper()
	var docs [][]byte
	for _, o := range objects {
		doc, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	k.run(t, bytes.Join(docs, []byte("---\n")), "apply", "-f", "-")
}

// setStatus replaces the status of object (e.g. "ingress/app") through its
// status subresource, as a load-balancer controller does: status is the
// object type's status struct.
func (k *kubectl) setStatus(t *testing.T, object string, status any) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		t.Fatal(err)
	}
	k.run(t, nil, "patch", object, "--subresource=status", "--type=merge", "--patch="+string(patch))
}

// checkServerDryRun checks that each manifest file passes
// `kubectl apply --dry-run=server --validate=strict` against k's API server:
// the API server decodes, defaults, validates and admits every object, and
// an unknown or duplicate field fails, without storing anything.
func checkServerDryRun(t *testing.T, k *kubectl, files ...string) {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("no manifests to check")
	}
	for _, f := range files {
		if out, err := k.try(nil, "apply", "--dry-run=server", "--validate=strict", "-f", f); err != nil {
			t.Errorf("%s does not pass server-side validation: %v\n%s", filepath.Base(f), err, out)
		}
	}
}
