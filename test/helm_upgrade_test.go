package test

import (
	"path/filepath"
	"strings"
	"testing"
)

// bundledSecrets are the Secrets of the bundled etcd that a release makes
// once: the certificates (and so the CA) and the passwords.
var bundledSecrets = []string{"server", "client", "root", "reader", "writer"}

// TestHelmUpgradeKeepsEtcd installs the chart with its bundled etcd into a
// real kube-apiserver (helm install, without hooks: no kubelet runs the
// Job), upgrades it, and finds each of its Secrets as the install made it:
// helm upgrade never makes a new CA or password under a running cluster. An
// upgrade that changes the member count is refused, saying why; helm
// uninstall leaves the Secrets, and an install of the same release again
// takes them up.
func TestHelmUpgradeKeepsEtcd(t *testing.T) {
	helm(t)
	etcd := startEtcd(t)
	api := startAPIServer(t, etcd.Endpoint())
	k := newKubectl(t, api)
	k.run(t, nil, "wait", "--for=create", "namespace/default", "--timeout=1m")
	release := func(cmd string, set ...string) (string, error) {
		args := []string{"--kubeconfig=" + api.kubeconfig, cmd, helmRelease, chartDir, "--namespace", "default",
			"--values", filepath.Join(chartDir, "ci", "bundled-etcd-values.yaml"), "--no-hooks",
			// prometheus-operator's kinds: this API server has no CRDs.
			"--set", "serviceMonitor.enabled=false", "--set", "prometheusRule.enabled=false"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		_, stderr, err := tryHelm(t, args...)
		return stderr, err
	}
	kept := func() map[string]string {
		data := map[string]string{}
		for _, s := range bundledSecrets {
			name := helmRelease + "-etcd-" + s
			data[name] = k.run(t, nil, "get", "secret", name, "--namespace", "default", "-o", "jsonpath={.data}")
		}
		return data
	}
	if stderr, err := release("install"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, stderr)
	}
	installed := kept()
	check := func(when string) {
		t.Helper()
		for name, data := range kept() {
			if data != installed[name] || data == "" {
				t.Errorf("%s: the Secret %s is not the install's", when, name)
			}
		}
	}
	if stderr, err := release("upgrade"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, stderr)
	}
	check("after helm upgrade")
	want := "etcd.cluster.members: the bundled etcd was installed with 1, and an upgrade can't change that"
	if stderr, err := release("upgrade", "etcd.cluster.members=3"); err == nil || !strings.Contains(stderr, want) {
		t.Errorf("helm upgrade to 3 members: %v, want an error saying %q:\n%s", err, want, stderr)
	}
	if _, stderr, err := tryHelm(t, "--kubeconfig="+api.kubeconfig, "uninstall", helmRelease, "--namespace", "default", "--no-hooks"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, stderr)
	}
	check("after helm uninstall")
	if stderr, err := release("install"); err != nil {
		t.Fatalf("helm install again: %v\n%s", err, stderr)
	}
	check("after helm install again")
}
