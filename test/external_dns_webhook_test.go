package test

import (
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// externalDNSRelease is the release name of external-dns's own chart in
// the chart README's helm install, which the tests render it as.
const externalDNSRelease = "external-dns"

// externalDNSWebhookTest is the test that the chart README's excerpt of
// the values is handed to (`<!-- tested by TestExternalDNSWebhookChart -->`).
const externalDNSWebhookTest = "TestExternalDNSWebhookChart"

// webhookSection is the title of the chart README's section on
// external-dns's webhook.
const webhookSection = "external-dns's webhook"

// TestExternalDNSWebhookChart renders external-dns's own chart (the one in
// the source of the external-dns release the tests run) with the real
// helm and corefile-examples/kubernetes/external-dns-webhook-values.yaml,
// decodes its Deployment strictly and checks that the pod fits together:
// external-dns, the release the tests run, runs the webhook provider with
// the sources, the TXT registry and the domain filter, and sends to the sidecar's API, on loopback at
// WEBHOOK_PORT; the sidecar runs our chart's image non-root, with the
// Corefile of webhook-configmap.yaml's ConfigMap, which is webhook.Corefile;
// its probes ask /healthz (liveness) and /readyz (readiness) on the chart's
// http-webhook port, HEALTH_PORT,
// where the Corefile's health listens on every address. Then it runs the
// sidecar's command as rendered (../coredns for the image's entrypoint)
// against a real etcd, and asks what the probes and external-dns would. The
// chart README shows the file's values and installs external-dns's chart at
// the version tested.
func TestExternalDNSWebhookChart(t *testing.T) {
	chart, version := externalDNSChart(t)
	d := externalDNSDeployment(t, renderExternalDNS(t, chart, externalDNSWebhookValues))
	edns, hook := podContainer(t, d, "external-dns"), podContainer(t, d, "webhook")
	if !strings.HasSuffix(edns.Image, ":"+version) {
		t.Errorf("external-dns's container runs %s, the tests external-dns %s", edns.Image, version)
	}
	checkCoreDNSContainer(t, d.Spec.Template.Spec, hook)
	if want := chartImage(t); hook.Image != want {
		t.Errorf("the sidecar runs %s, our chart %s", hook.Image, want)
	}
	env := containerEnv(hook)
	checkArgs(t, edns, "--provider=webhook", "--source=ingress", "--source=service", "--source=crd",
		"--policy=", "--registry=txt", "--txt-owner-id=", "--domain-filter="+env["DOMAIN"])

	corefile := readManifests(t).mountedFile(t, d, hook, hook.Args[len(hook.Args)-1])
	if want := withoutHeader(readExample(t, "webhook.Corefile")); corefile != want {
		t.Errorf("the ConfigMap's Corefile differs from webhook.Corefile's:\n%s\nwebhook.Corefile:\n%s", corefile, want)
	}
	api := webhookProviderURL(t, edns)
	if api.Port() != env["WEBHOOK_PORT"] || !strings.Contains(corefile, "webhook "+api.Hostname()+":{$WEBHOOK_PORT} ") {
		t.Errorf("external-dns sends to %s, the sidecar's API listens on WEBHOOK_PORT %s of its Corefile's webhook address", api, env["WEBHOOK_PORT"])
	}
	healthPort := containerPort(t, hook, "http-webhook")
	if env["HEALTH_PORT"] != strconv.Itoa(int(healthPort)) || !strings.Contains(corefile, "health :{$HEALTH_PORT}\n") {
		t.Errorf("the chart's http-webhook port is %d, the Corefile's health listens on every address at HEALTH_PORT %s", healthPort, env["HEALTH_PORT"])
	}
	for p, path := range map[*corev1.Probe]string{hook.LivenessProbe: "/healthz", hook.ReadinessProbe: "/readyz"} {
		port := int32(p.HTTPGet.Port.IntValue())
		if p.HTTPGet.Port.Type == intstr.String {
			port = containerPort(t, hook, p.HTTPGet.Port.StrVal)
		}
		if p.HTTPGet.Path != path || port != healthPort {
			t.Errorf("a probe asks %s on port %s, want %s on %d", p.HTTPGet.Path, p.HTTPGet.Port.String(), path, healthPort)
		}
	}
	checkWebhookREADME(t, readChartMeta(t, chart).Version)

	// The sidecar as rendered, but for etcd, the test's, and the two ports:
	// fixed ones would collide with other tests' and users' on a shared
	// machine.
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+env["DOMAIN"], exampleInternal))
	env["ETCD_ENDPOINT"], env["WEBHOOK_PORT"], env["HEALTH_PORT"] = etcd.Endpoint(), freePort(t), freePort(t)
	sidecar := startSidecar(t, hook, corefile, env)
	health := "http://127.0.0.1:" + env["HEALTH_PORT"]
	sidecar.awaitReady(t, time.Minute, func() error { return getOK(health + hook.ReadinessProbe.HTTPGet.Path) })
	checkHTTP(t, health+hook.LivenessProbe.HTTPGet.Path, "ok")
	api.Host = net.JoinHostPort(api.Hostname(), env["WEBHOOK_PORT"])
	checkNegotiation(t, api.String(), env["DOMAIN"])
	if resp, body := webhookCall(t, "GET", api.String()+"/records", ""); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, `"dnsName":"app.`+env["DOMAIN"]+`"`) {
		t.Errorf("GET /records: %d %s, want the record in etcd", resp.StatusCode, body)
	}
}

// externalDNSChart returns the directory of external-dns's own chart in the
// source of the release the tests run (externalDNSSource), and the
// release's version.
func externalDNSChart(t *testing.T) (chart, version string) {
	t.Helper()
	dir, version := externalDNSSource(t)
	return filepath.Join(dir, "charts", "external-dns"), version
}

// renderExternalDNS renders external-dns's chart at chart with values, a
// file of corefile-examples/kubernetes, as the READMEs install it.
func renderExternalDNS(t *testing.T, chart, values string) string {
	t.Helper()
	return runHelm(t, "template", externalDNSRelease, chart, "--namespace", "default",
		"--values", filepath.Join(examplesDir, "kubernetes", values))
}

// externalDNSDeployment returns the Deployment of the manifests rendered
// from external-dns's chart, decoded strictly; t fails unless there is
// exactly one.
func externalDNSDeployment(t *testing.T, rendered string) *appsv1.Deployment {
	t.Helper()
	deployments := map[string]*appsv1.Deployment{}
	for _, doc := range helmDocs(rendered) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if meta.APIVersion+" "+meta.Kind != "apps/v1 Deployment" {
			continue
		}
		if err := decodeInto([]byte(doc), deployments); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
	}
	if len(deployments) != 1 {
		t.Fatalf("external-dns's chart rendered %d Deployments, want 1", len(deployments))
	}
	for _, d := range deployments {
		return d
	}
	return nil
}

// podContainer returns the container name of d's pod.
func podContainer(t *testing.T, d *appsv1.Deployment, name string) corev1.Container {
	t.Helper()
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("Deployment %s has no container %s", d.Name, name)
	}
	return d.Spec.Template.Spec.Containers[i]
}

// webhookProviderURL returns where external-dns's container c sends its
// webhook provider's requests: its --webhook-provider-url.
func webhookProviderURL(t *testing.T, c corev1.Container) *url.URL {
	t.Helper()
	for _, arg := range c.Args {
		if v, ok := strings.CutPrefix(arg, "--webhook-provider-url="); ok {
			u, err := url.Parse(v)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
	}
	t.Fatalf("external-dns lacks --webhook-provider-url in %q", c.Args)
	return nil
}

// chartMeta is what the tests read of a chart's Chart.yaml.
type chartMeta struct {
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}

// readChartMeta reads the Chart.yaml of the chart at dir.
func readChartMeta(t *testing.T, dir string) chartMeta {
	t.Helper()
	var c chartMeta
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(dir, "Chart.yaml"))), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// chartImage returns the image our chart runs by default: its values'
// image.repository, with its appVersion as the tag.
func chartImage(t *testing.T) string {
	t.Helper()
	var values struct {
		Image struct {
			Repository string `json:"repository"`
		} `json:"image"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(chartDir, "values.yaml"))), &values); err != nil {
		t.Fatal(err)
	}
	return values.Image.Repository + ":" + readChartMeta(t, chartDir).AppVersion
}

// freePort returns a TCP port free on every address, for the sidecar's
// listeners.
func freePort(t *testing.T) string {
	t.Helper()
	port, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(port)
}

// startSidecar starts container c as the kubelet would: the image's
// entrypoint (../coredns, which make builds) with c's arguments, its -conf
// file holding corefile, and env as its whole environment.
func startSidecar(t *testing.T, c corev1.Container, corefile string, env map[string]string) *program {
	t.Helper()
	coredns := builtCoreDNS(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(c.Args)
	args[len(args)-1] = conf // the -conf FILE checkCoreDNSContainer checked
	cmd := exec.Command(coredns, args...)
	for name, value := range env {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	return startProgram(t, c.Name, cmd, dir)
}

// checkWebhookREADME checks the chart README's section on external-dns's
// webhook: its YAML excerpt is externalDNSWebhookValues's (every key it
// shows with the file's value), and its install applies the ConfigMap and
// installs external-dns's chart at version with the values file.
func checkWebhookREADME(t *testing.T, version string) {
	t.Helper()
	var excerpt, install string
	for _, s := range readSnippets(t, filepath.Join(chartDir, "README.md")) {
		if s.Section != webhookSection {
			continue
		}
		switch s.Lang {
		case "yaml":
			excerpt = s.Text
		case "sh":
			install = strings.Join(strings.Fields(strings.ReplaceAll(s.Text, "\\\n", "")), " ")
		}
	}
	var shown, values any
	valuesFile := filepath.Join(examplesDir, "kubernetes", externalDNSWebhookValues)
	if err := yaml.Unmarshal([]byte(readFile(t, valuesFile)), &values); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(excerpt), &shown); err != nil {
		t.Errorf("the chart README's values under %q: %v", webhookSection, err)
	} else if shown == nil || !holds(values, shown) {
		t.Errorf("the chart README's values under %q are not %s's:\n%s", webhookSection, externalDNSWebhookValues, excerpt)
	}
	for _, want := range []string{
		"kubectl apply -f corefile-examples/kubernetes/webhook-configmap.yaml",
		"helm install " + externalDNSRelease + " external-dns/external-dns --version " + version + " ",
		"--values corefile-examples/kubernetes/" + externalDNSWebhookValues,
	} {
		if !strings.Contains(install, want) {
			t.Errorf("the chart README's install under %q lacks %q: %s", webhookSection, want, install)
		}
	}
}

// holds reports whether whole holds part: each key of a map with a value
// that holds part's, a list item by item, anything else equal.
func holds(whole, part any) bool {
	switch p := part.(type) {
	case map[string]any:
		w, ok := whole.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range p {
			if !holds(w[k], v) {
				return false
			}
		}
		return true
	case []any:
		w, ok := whole.([]any)
		if !ok || len(w) != len(p) {
			return false
		}
		for i := range p {
			if !holds(w[i], p[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(whole, part)
	}
}
