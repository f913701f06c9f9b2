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
// the one for the chart's links to monitoring/, is shown only then.
func runHelm(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, err := tryHelm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
	}
	return stdout
}

// tryHelm runs helm with args and returns its standard output and error,
// and whether it failed.
func tryHelm(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, helm(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
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

// TestHelmLint runs `helm lint --strict` on the chart with each values file
// of ci/: warnings fail too. (The default values lack what only the user
// knows: TestHelmBare.)
func TestHelmLint(t *testing.T) {
	for _, f := range chartValuesFiles(t) {
		runHelm(t, "lint", "--strict", chartDir, "--values", f)
	}
}

// TestHelmRefuses checks that the chart refuses values that would make a
// release fail or leak, with a message that says why: views told apart by
// the client's address behind a Service that rewrites it, a hidden primary
// without its key, addresses beside a source, a name server inside the
// domain without glue (in any case, with a final dot), a Lease duration
// without the Lease's name, a label replacing one publish sets, a misspelled value,
// and values CoreDNS would refuse at start-up (values.schema.json).
func TestHelmRefuses(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"views=clients", "service.externalTrafficPolicy=Cluster"}, "service.externalTrafficPolicy must be Local"},
		{[]string{"views=hidden-primary", "hiddenPrimary.secondaries={192.0.2.53:53}"}, "tsig.secretName names the Secret"},
		{[]string{"globaladdr.addresses={203.0.113.10}", "globaladdr.from.etcdKey=/globaladdr/example.com"}, "addresses or from sources, not both"},
		{[]string{"views=hidden-primary", "tsig.secretName=tsig"}, "/hiddenPrimary/secondaries"},
		{[]string{"globaladdr.addresses=null"}, "globaladdr.addresses: the global address"},
		{[]string{"globaladdr.addresses={}", "globaladdr.from.etcdKey="}, "globaladdr.addresses: the global address"},
		{[]string{"zone.ns={}"}, "zone.ns: the zone's name servers"},
		{[]string{"zone.ns={ns1.example.com,ns2.example.net}"}, `zone.ns: ns1.example.com lies inside example.com, and zone.glue gives no address of it: the NS answers would carry none (--set 'zone.glue.ns1\.example\.com={203.0.113.10}')`},
		{[]string{"zone.ns={NS1.Example.com.}", "zone.glue.ns2\\.example\\.com={203.0.113.10}"}, "zone.ns: NS1.Example.com. lies inside example.com"},
		{[]string{"etcd.endpoints={}"}, "etcd.endpoints: the etcd external-dns writes to"},
		{[]string{"globaladdr.adresses={203.0.113.10}"}, "additional properties 'adresses' not allowed"},
		{[]string{"cache=0"}, "/cache"},
		{[]string{"views=ports", "lan.upstream={}"}, "/lan/upstream"},
		{[]string{"lan.acme.lease=3 hours"}, "/lan/acme/lease"},
		{[]string{"publish.enabled=true", "publish.lease.duration=20s"}, "publish.lease.name: a Lease duration needs the Lease's name"},
		{[]string{"publish.labels.app\\.kubernetes\\.io/managed-by=someone"}, "invalid propertyName 'app.kubernetes.io/managed-by'"},
		{[]string{"publish.namespace=External_DNS"}, "/publish/namespace"},
		{[]string{"etcd.tls.secretName=etcd-client-tls"}, "http://etcd:2379 is not https://"},
		{[]string{"etcd.credentials.secretName=etcd-credentials", "etcd.endpoints={https://etcd-0:2379,http://etcd-1:2379}"}, "http://etcd-1:2379 is not https://"},
	} {
		args := []string{"template", helmRelease, chartDir, "--values", filepath.Join(chartDir, "ci", "external-values.yaml")}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		if _, stderr, err := tryHelm(t, args...); err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("helm template --set %q: %v, want an error saying %q:\n%s", tc.set, err, tc.want, stderr)
		}
	}
}

// TestHelmBare renders the chart with no values: it must refuse, naming each
// value only the user knows (the domain, the global address or its source,
// etcd's endpoints, the name servers) and how to set it, instead of a
// plausible deployment of placeholders.
func TestHelmBare(t *testing.T) {
	_, stderr, err := tryHelm(t, "template", helmRelease, chartDir)
	if err == nil {
		t.Fatal("a bare install rendered")
	}
	for _, want := range []string{"set these values:", "domain:", "globaladdr.addresses:", "globaladdr.from.etcdKey", "etcd.endpoints:", "zone.ns:", "--set domain="} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal of a bare install lacks %q:\n%s", want, stderr)
		}
	}
}

// TestHelmFrom renders the chart with a from source and no addresses, as a
// user sets it: globaladdr.addresses needs no resetting.
func TestHelmFrom(t *testing.T) {
	out := runHelm(t, "template", helmRelease, chartDir, "--set", "domain=example.com", "--set", "etcd.endpoints={http://etcd:2379}",
		"--set", "zone.ns={ns1.example.net}", "--set", "globaladdr.from.etcdKey=/globaladdr/example.com")
	if !strings.Contains(out, "from etcd /globaladdr/example.com") {
		t.Errorf("the Corefile lacks the source:\n%s", out)
	}
}

// chartReference is the published chart, as the README installs it.
const chartReference = "oci://ghcr.io/globaladdr/charts/globaladdr"

// TestHelmREADMEInstall runs the README's helm install as shown, with the
// values.yaml the README shows before it, helm rendering the release
// instead of installing it (template for install) from this repository's
// chart instead of the published one, which must be this chart's version:
// the Corefile holds its name server inside the domain, and that one's
// glue, which the chart refuses to go without.
func TestHelmREADMEInstall(t *testing.T) {
	var install, values string
	for _, s := range readSnippets(t, "../README.md") {
		switch {
		case s.Section != "Install on Kubernetes":
		case s.Lang == "yaml" && install == "":
			values = s.Text
		case strings.HasPrefix(s.Text, "helm install "):
			install = s.Text
		}
	}
	if install == "" || values == "" {
		t.Fatal("README.md's Install on Kubernetes has no helm install with a values.yaml before it")
	}
	for _, want := range []string{" " + chartReference + " ", " --version " + readChartMeta(t, chartDir).Version + " ", " -f values.yaml"} {
		if !strings.Contains(install, want) {
			t.Errorf("the README's helm install lacks %q: %s", want, install)
		}
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o644))
	chart, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-ec", `helm() { shift; "$HELM" template "$@"; }`+"\n"+strings.Replace(install, chartReference, chart, 1))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM="+helm(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", install, err, out)
	}
	for _, want := range []string{"ns ns1.example.com ns2.example.net\n", "glue ns1.example.com 203.0.113.10\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the Corefile lacks %q:\n%s", want, out)
		}
	}
}

// TestHelmNoWarnings renders the chart and wants nothing on standard error:
// no warning about links out of the chart, or anything else.
func TestHelmNoWarnings(t *testing.T) {
	for _, f := range chartValuesFiles(t) {
		if _, stderr, err := tryHelm(t, "template", helmRelease, chartDir, "--values", f); err != nil || stderr != "" {
			t.Errorf("helm template --values %s: %v, warnings:\n%s", f, err, stderr)
		}
	}
}
