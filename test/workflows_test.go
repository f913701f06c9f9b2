package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// workflowRun is a run step a workflow may hold besides make: .ci/run, which
// TestCIRun runs, with make's arguments.
var workflowRun = regexp.MustCompile(`^\.ci/run( [^;&|<>]*)?$`)

// workflowExpression is an expression of GitHub's (${{ github.ref_name }}),
// which checkRunStep reads as one word.
var workflowExpression = regexp.MustCompile(`\$\{\{[^}]*\}\}`)

// TestWorkflows checks each run step of the GitHub workflows: one command,
// make with targets the Makefile has, or .ci/run, which TestCIRun runs.
// Whatever CI and a release run is then what make and the tests here run.
func TestWorkflows(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	if err != nil || len(files) != 2 {
		t.Fatalf(".github/workflows holds %q, want ci.yml and release.yml (%v)", files, err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Jobs map[string]struct {
				Steps []struct{ Uses, Run string }
			}
		}
		if err := yaml.Unmarshal(data, &w); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var runs []string
		for job, j := range w.Jobs {
			for _, s := range j.Steps {
				if s.Run == "" {
					continue
				}
				run := strings.TrimSpace(s.Run)
				runs = append(runs, run)
				if err := checkRunStep(run, string(makefile)); err != nil {
					t.Errorf("%s: job %s: run %q: %v", filepath.Base(f), job, run, err)
				}
			}
		}
		// What each workflow is for: CI runs make test through .ci/run, a
		// release builds dist/ through it and pushes.
		want := map[string][]string{"ci.yml": {".ci/run"}, "release.yml": {".ci/run dist ", "make push "}}[filepath.Base(f)]
		for _, w := range want {
			if !slices.ContainsFunc(runs, func(r string) bool { return r == w || strings.HasPrefix(r, w) }) {
				t.Errorf("%s runs no %q: %q", filepath.Base(f), w, runs)
			}
		}
	}
}

// checkRunStep returns an error unless run is one command: .ci/run, or
// make with targets makefile defines (its other words set variables).
func checkRunStep(run, makefile string) error {
	run = workflowExpression.ReplaceAllString(run, "EXPR")
	if workflowRun.MatchString(run) {
		return nil
	}
	words := strings.Fields(run)
	if strings.ContainsAny(run, ";&|<>$`\n") || len(words) == 0 || words[0] != "make" {
		return fmt.Errorf("neither make nor .ci/run (a command no test runs)")
	}
	for _, w := range words[1:] {
		if strings.Contains(w, "=") {
			continue
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(w) + `:`).MatchString(makefile) {
			return fmt.Errorf("the Makefile has no target %s", w)
		}
	}
	return nil
}

// TestCIRun runs .ci/run as the workflows do, with a make that records its
// arguments and without apt-get (which it then leaves alone): with no
// arguments it runs make -j2 test, with some make -j2 with those.
func TestCIRun(t *testing.T) {
	root := repoRoot(t)
	for _, tc := range []struct{ args, want string }{
		{"", "-j2 test"},
		{"dist VERSION=v0.1.0", "-j2 dist VERSION=v0.1.0"},
	} {
		bin := t.TempDir()
		for _, p := range []string{"bash", "dirname", "id"} {
			path, err := exec.LookPath(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
				t.Fatal(err)
			}
		}
		log := filepath.Join(bin, "make.args")
		if err := os.WriteFile(filepath.Join(bin, "make"), []byte("#!"+filepath.Join(bin, "bash")+"\necho \"$*\" > "+log+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(bin, "bash"), append([]string{filepath.Join(root, ".ci", "run")}, strings.Fields(tc.args)...)...)
		cmd.Env = []string{"PATH=" + bin}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf(".ci/run %s: %v\n%s", tc.args, err, out)
		}
		got, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf(".ci/run %s ran no make: %v", tc.args, err)
		}
		if strings.TrimSpace(string(got)) != tc.want {
			t.Errorf(".ci/run %s ran make %s, want make %s", tc.args, strings.TrimSpace(string(got)), tc.want)
		}
	}
}
