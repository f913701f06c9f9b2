package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// runHelmTestPod runs the command of r's `helm test` Pod as its container
// would, with Debian's busybox for the image's sh and nslookup, and returns
// its output and whether it failed. views gives the address each view of
// the Pod's VIEWS is asked at instead of its Service's (by the view's name:
// lan, external, client); t fails when the Pod names another.
func runHelmTestPod(t *testing.T, r *release, views map[string]string) (string, error) {
	t.Helper()
	if len(r.pods) != 1 {
		t.Fatalf("%d Pods for helm test, want 1", len(r.pods))
	}
	var env []string
	for _, pod := range r.pods {
		c := pod.Spec.Containers[0]
		if len(c.Command) != 3 || c.Command[0] != "sh" || c.Command[1] != "-c" || len(c.Args) != 0 {
			t.Fatalf("helm test's container runs %q %q, want sh -c SCRIPT", c.Command, c.Args)
		}
		for _, e := range c.Env {
			value := e.Value
			if e.Name == "VIEWS" {
				var asked []string
				for _, pair := range strings.Fields(e.Value) {
					view, _, _ := strings.Cut(pair, "=")
					addr, ok := views[view]
					if !ok {
						t.Fatalf("helm test asks the %s view, which the test does not serve (VIEWS %q)", view, e.Value)
					}
					asked = append(asked, view+"="+addr)
				}
				value = strings.Join(asked, " ")
			}
			env = append(env, e.Name+"="+value)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, busybox(t), c.Command...)
		cmd.Env = append(env, "PATH="+busyboxPath(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return "", nil
}

// busybox returns the path of Debian's busybox, or ends t through
// prereq.Missing.
func busybox(t *testing.T) string {
	t.Helper()
	return prereq.Program(t, "busybox", "busybox")
}

// busyboxPath returns a directory holding nslookup, sed and grep as busybox's
// applets, as the image has them, for PATH.
func busyboxPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, applet := range []string{"nslookup", "sed", "grep"} {
		if err := os.Symlink(busybox(t), filepath.Join(dir, applet)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkHelmTestPod fails t unless r's helm test passes against views (see
// runHelmTestPod).
func checkHelmTestPod(t *testing.T, r *release, views map[string]string) {
	t.Helper()
	if out, err := runHelmTestPod(t, r, views); err != nil {
		t.Errorf("helm test failed against %v: %v\n%s", views, err, out)
	}
}

// checkHelmTestFails fails t unless r's helm test fails against views,
// saying want.
func checkHelmTestFails(t *testing.T, r *release, views map[string]string, want string) {
	t.Helper()
	if out, err := runHelmTestPod(t, r, views); err == nil || !strings.Contains(out, want) {
		t.Errorf("helm test against %v: %v, want a failure saying %q:\n%s", views, err, want, out)
	}
}
