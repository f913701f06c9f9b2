package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"golang.org/x/crypto/bcrypt"
)

// TestPush runs make push of dist/'s release to a registry on loopback
// (Debian's docker-registry, which wants a user and password), with the
// credentials in the environment as the release workflow passes them, over
// plain HTTP. The registry must then hold the image's index, with the
// archive's image for each platform, and the chart, which helm installs
// from it, as a user would, into a kube-apiserver: the release's
// Deployment runs the image of the chart's appVersion. make push must not
// show the password.
func TestPush(t *testing.T) {
	prereq.Program(t, "make", "make")
	skopeo := prereq.Program(t, "skopeo", "skopeo")
	helm(t)
	d := readDist(t)
	const user, password = "release", "push-secret-8d1f"
	reg := startRegistry(t, user, password)
	repo := reg + "/globaladdr-test"

	cmd := exec.Command("make", "-C", repoRoot(t), "--no-print-directory", "push", "REGISTRY="+repo, "PLAIN_HTTP=1", "VERSION="+d.version)
	cmd.Env = append(os.Environ(), "REGISTRY_USER="+user, "REGISTRY_PASSWORD="+password)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make push: %v\n%s", err, out)
	}
	if strings.Contains(string(out), password) {
		t.Errorf("make push showed the password:\n%s", out)
	}

	t.Run("image", func(t *testing.T) {
		ref := "docker://" + repo + "/globaladdr:" + d.version
		index, err := exec.Command(skopeo, "inspect", "--raw", "--tls-verify=false", "--creds", user+":"+password, ref).Output()
		if err != nil {
			t.Fatalf("skopeo inspect %s: %v", ref, err)
		}
		pushed, archived := listImages(t, ref, index), archiveImages(t, d)
		if len(pushed) != len(imagePlatforms) || fmt.Sprint(pushed) != fmt.Sprint(archived) {
			t.Errorf("%s lists %v, want the archive's %v", ref, pushed, archived)
		}
	})

	t.Run("chart", func(t *testing.T) {
		config := filepath.Join(t.TempDir(), "registry.json")
		cmd := exec.Command(helm(t), "registry", "login", "--registry-config", config, "--plain-http", "--username", user, "--password-stdin", reg)
		cmd.Stdin = strings.NewReader(password)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm registry login: %v\n%s", err, out)
		}
		chart := "oci://" + repo + "/charts/globaladdr"
		etcd := startEtcd(t)
		api := startAPIServer(t, etcd.Endpoint())
		// The values of a ci/ file, without the objects of Prometheus's
		// operator, whose kinds a bare API server does not know.
		runHelm(t, "install", helmRelease, chart, "--version", d.version, "--plain-http", "--registry-config", config,
			"--kubeconfig", api.kubeconfig, "--namespace", "default",
			"--values", filepath.Join(chartDir, "ci", "external-values.yaml"),
			"--set", "serviceMonitor.enabled=false", "--set", "prometheusRule.enabled=false")
		image := newKubectl(t, api).run(t, nil, "get", "deployment", helmRelease, "--namespace", "default",
			"--output", "jsonpath={.spec.template.spec.containers[0].image}")
		if !strings.HasSuffix(image, ":"+d.version) {
			t.Errorf("the Deployment installed from %s runs %q, want the tag %s", chart, image, d.version)
		}
	})
}

// startRegistry starts Debian's docker-registry on a free loopback port,
// storing in t's temporary directory, serving HTTP with htpasswd's basic
// authentication of user with password, and returns its host:port once it
// answers. It is killed when t ends.
func startRegistry(t *testing.T, user, password string) string {
	t.Helper()
	bin := prereq.Program(t, "docker-registry", "docker-registry")
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	config := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `version: 0.1
storage:
  filesystem: {rootdirectory: %s}
http:
  addr: %s
auth:
  htpasswd: {realm: globaladdr-test, path: %s}
`, filepath.Join(dir, "storage"), addr, htpasswd), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProgram(t, "docker-registry", exec.Command(bin, "serve", config), dir)
	p.awaitReady(t, 30*time.Second, func() error {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("/v2/ answers %s, want 401 Unauthorized", resp.Status)
		}
		return nil
	})
	return addr
}
