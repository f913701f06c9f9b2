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
		{[]string{"zone.ns={}"}, "at '/zone/ns/0'"},
		{[]string{"zone.ns={ns1.example.com,ns2.example.net}"}, `zone.ns: ns1.example.com lies inside example.com, and zone.glue gives no address of it: the NS answers would carry none (--set 'zone.glue.ns1\.example\.com={203.0.113.10}')`},
		{[]string{"zone.ns={NS1.Example.com.}", "zone.glue.ns2\\.example\\.com={203.0.113.10}"}, "zone.ns: NS1.Example.com. lies inside example.com"},
		{[]string{"etcd.endpoints={}"}, "at '/etcd/endpoints/0'"},
		{[]string{"globaladdr.adresses={203.0.113.10}"}, "additional properties 'adresses' not allowed"},
		{[]string{"cache=0"}, "/cache"},
		{[]string{"views=ports", "lan.upstream={}"}, "/lan/upstream"},
		{[]string{"lan.acme.lease=3 hours"}, "/lan/acme/lease"},
		{[]string{"publish.enabled=true", "publish.lease.duration=20s"}, "publish.lease.name: a Lease duration needs the Lease's name"},
		{[]string{"publish.labels.app\\.kubernetes\\.io/managed-by=someone"}, "invalid propertyName 'app.kubernetes.io/managed-by'"},
		{[]string{"publish.namespace=External_DNS"}, "/publish/namespace"},
		{[]string{"etcd.tls.secretName=etcd-client-tls"}, "http://etcd:2379 is not https://"},
		{[]string{"etcd.deploy=true"}, "etcd.deploy is true, and etcd.endpoints names an etcd of your own: leave one of them out"},
		{[]string{"etcd.deploy=false", "etcd.endpoints=null"}, "etcd.deploy is false: set etcd.endpoints"},
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

// TestHelmBare renders and lints the chart with no values: both must
// refuse, naming each value only the user knows that the schema requires
// (the domain, the name servers: etcd's endpoints are not, the chart runs
// one without them), instead of a plausible
// deployment of placeholders; helm lint softens the templates' fail, not the
// schema. Without a global address or its source, the template refuses,
// saying how to set one.
func TestHelmBare(t *testing.T) {
	for _, cmd := range [][]string{{"template", helmRelease, chartDir}, {"lint", chartDir}} {
		stdout, stderr, err := tryHelm(t, cmd...)
		if err == nil {
			t.Errorf("helm %s passed with no values", cmd[0])
		}
		for _, want := range []string{"at '/domain': minLength", "at '/zone/ns': minItems"} {
			if !strings.Contains(stdout+stderr, want) {
				t.Errorf("helm %s's refusal of a bare install lacks %q:\n%s%s", cmd[0], want, stdout, stderr)
			}
		}
	}
	_, stderr, err := tryHelm(t, "template", helmRelease, chartDir, "--set", "domain=example.com", "--set", "etcd.endpoints={http://etcd:2379}", "--set", "zone.ns={ns1.example.net}")
	if want := "set globaladdr.addresses: the global address (--set globaladdr.addresses='{203.0.113.10}'), or a source: globaladdr.from.etcdKey"; err == nil || !strings.Contains(stderr, want) {
		t.Errorf("without a global address: %v, want an error saying %q:\n%s", err, want, stderr)
	}
}

// TestHelmSchemaRefuses gives each value that the chart took beside the
// first release's (and the Services' loadBalancerIP, which it took out) a
// wrong type or value and an unknown key: helm refuses each before
// rendering, naming it.
func TestHelmSchemaRefuses(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{`service.ipFamilyPolicy=1`, "at '/service/ipFamilyPolicy'"},
		{`lanService.ipFamilyPolicy="DualStack"`, "at '/lanService/ipFamilyPolicy'"},
		{`service.ipFamilies="IPv6"`, "at '/service/ipFamilies'"},
		{`lanService.ipFamilies=["IPv6","IPv5"]`, "at '/lanService/ipFamilies/1'"},
		{`service.loadBalancerIP="192.168.0.53"`, "give the address by annotation (service.annotations), e.g. metallb.io/loadBalancerIPs"},
		{`lanService.loadBalancerIP="192.168.0.10"`, "at '/lanService/loadBalancerIP'"},
		{`service.loadBalancerIPs="192.168.0.53"`, "additional properties 'loadBalancerIPs' not allowed"},
		{`hiddenPrimary.notifySource=53`, "at '/hiddenPrimary/notifySource'"},
		{`hiddenPrimary.notifySource="ns1.example.net"`, "at '/hiddenPrimary/notifySource'"},
		{`hiddenPrimary.notifysource="192.0.2.53"`, "additional properties 'notifysource' not allowed"},
		{`hiddenPrimary.xot=true`, "at '/hiddenPrimary/xot'"},
		{`hiddenPrimary.xot={"enabled":true}`, "at '/hiddenPrimary/xot/secretName'"},
		{`hiddenPrimary.xot={"port":"853"}`, "at '/hiddenPrimary/xot/port'"},
		{`hiddenPrimary.xot={"certificate":"tls"}`, "additional properties 'certificate' not allowed"},
		{`zone.dnssec={"secretName":true}`, "at '/zone/dnssec/secretName'"},
		{`zone.dnssec={"secretName":"keys"}`, "at '/zone/dnssec/keys': minItems"},
		{`zone.dnssec={"keys":[{"key":"Kexample.com.+013+12345.key","path":"Kexample.com.+013+12345.key"}]}`, "at '/zone/dnssec/keys/0/key'"},
		{`zone.dnssec={"keys":[{"key":"ksk.key","path":"ksk.key"}]}`, "at '/zone/dnssec/keys/0/path'"},
		{`zone.dnssec={"key":"ksk"}`, "additional properties 'key' not allowed"},
		{`lan.fallthrough=true`, "at '/lan/fallthrough'"},
		{`lan.fallthrough={"zones":"example.com"}`, "at '/lan/fallthrough/zones'"},
		{`lan.fallthrough={"zone":["example.com"]}`, "additional properties 'zone' not allowed"},
		{`webhook.enabled="yes"`, "at '/webhook/enabled'"},
		{`webhook.port=0`, "at '/webhook/port'"},
		{`webhook.healthPort="8080"`, "at '/webhook/healthPort'"},
		{`webhook.address="0.0.0.0"`, "additional properties 'address' not allowed"},
		{`helmTest.name=5`, "at '/helmTest/name'"},
		{`helmTest.name="app example.com"`, "at '/helmTest/name'"},
		{`helmTest.image={"tag":1.37}`, "at '/helmTest/image/tag'"},
		{`helmTest.image={"digest":"sha256:0"}`, "additional properties 'digest' not allowed"},
		{`helmTest.server="10.0.0.10"`, "additional properties 'server' not allowed"},
		{`etcd.deploy="yes"`, "at '/etcd/deploy'"},
		{`etcd.cluster={"members":2}`, "at '/etcd/cluster/members'"},
		{`etcd.cluster={"persistence":{"size":"lots"}}`, "at '/etcd/cluster/persistence/size'"},
		{`etcd.cluster={"backup":{"size":"2 GB"}}`, "at '/etcd/cluster/backup/size'"},
		{`etcd.cluster={"quotaBackendBytes":1000}`, "at '/etcd/cluster/quotaBackendBytes'"},
		{`etcd.cluster={"certManager":{"issuer":{"kind":"Vault"}}}`, "at '/etcd/cluster/certManager/issuer/kind'"},
		{`etcd.cluster={"member":3}`, "additional properties 'member' not allowed"},
		{`publish.lease={"name":"dns","duration":"1s"}`, "at '/publish/lease/duration'"},
		{`publish.lease={"name":"dns","duration":"0m1s"}`, "at '/publish/lease/duration'"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			t.Parallel()
			_, stderr, err := tryHelm(t, "template", helmRelease, chartDir, "--values", filepath.Join(chartDir, "ci", "external-values.yaml"), "--set-json", tc.set)
			if err == nil || !strings.Contains(stderr, "values don't meet the specifications of the schema") || !strings.Contains(stderr, tc.want) {
				t.Errorf("helm template --set-json %s: %v, want the schema's refusal saying %q:\n%s", tc.set, err, tc.want, stderr)
			}
		})
	}
}

// TestChartVersion checks that Chart.yaml's version and appVersion are the
// release of the VERSION file: the chart and the image it runs by default
// are the release's.
func TestChartVersion(t *testing.T) {
	version := strings.TrimSpace(readFile(t, "../VERSION"))
	if c := readChartMeta(t, chartDir); c.Version != version || c.AppVersion != version {
		t.Errorf("Chart.yaml has version %q and appVersion %q, VERSION %q", c.Version, c.AppVersion, version)
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
// glue, which the chart refuses to go without. The second helm install is
// external-dns's chart at the version the tests render, with
// externalDNSWebhookValues, beside the sidecar's ConfigMap.
func TestHelmREADMEInstall(t *testing.T) {
	var install, externalDNS, values string
	for _, s := range readSnippets(t, "../README.md") {
		switch {
		case s.Section != "Install on Kubernetes":
		case s.Lang == "yaml" && install == "":
			values = s.Text
		case strings.HasPrefix(s.Text, "helm install "):
			install, externalDNS, _ = strings.Cut(s.Text, "\n") // the chart's, then external-dns's
		}
	}
	if install == "" || values == "" {
		t.Fatal("README.md's Install on Kubernetes has no helm install with a values.yaml before it")
	}
	chartDirectory, _ := externalDNSChart(t)
	for _, want := range []string{"helm install external-dns ", " --version " + readChartMeta(t, chartDirectory).Version + " ", " -f corefile-examples/kubernetes/" + externalDNSWebhookValues + "\n"} {
		if !strings.Contains(externalDNS, want) {
			t.Errorf("the README's second helm install, external-dns's, lacks %q: %s", want, externalDNS)
		}
	}
	if !strings.Contains(values, "webhook:\n  enabled: true\n") {
		t.Errorf("the README's values.yaml lacks webhook.enabled, the sidecar's ConfigMap:\n%s", values)
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
