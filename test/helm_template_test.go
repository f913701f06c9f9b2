package test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// TestHelmTemplate renders the chart with each values file of its ci/
// directory and decodes every manifest strictly (helm_release_test.go).
// The objects must fit together: one Deployment runs the image non-root
// with nothing but NET_BIND_SERVICE and a read-only root, with its Corefile
// from the ConfigMap; that Corefile is the example the values file names
// with the values filled in (helm_corefile_test.go); each Service reaches
// the pods' DNS ports (keeping the clients' addresses where the views are
// told apart by them); the pods' service account may do what publish
// needs, and nothing without it (helm_publish_test.go); a hidden primary
// rolls out by Recreate; the PodDisruptionBudget and the ServiceMonitor select
// what they must; the PrometheusRule holds monitoring/'s rules, and the
// dashboard's ConfigMap its dashboard, labelled for Grafana's sidecar.
func TestHelmTemplate(t *testing.T) {
	files := chartValuesFiles(t)
	if len(files) != len(chartCases) {
		t.Fatalf("%s/ci holds %d values files; this test knows %d", chartDir, len(files), len(chartCases))
	}
	for _, c := range chartCases {
		t.Run(c.values, func(t *testing.T) {
			r := renderRelease(t, c.path())
			deploy := r.only(t)
			checkCoreDNSPod(t, deploy)
			// A hidden primary's rollout stops the old pods first: with
			// both at once, a change in etcd would get one serial for
			// two zones.
			if hidden := chartValues(t, c.path())["views"] == "hidden-primary"; hidden != (deploy.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType) {
				t.Errorf("views hidden-primary %v, strategy %q", hidden, deploy.Spec.Strategy.Type)
			}
			corefile := r.corefile(t, deploy)
			checkChartCorefile(t, c, corefile)
			checkPublishRBAC(t, r, deploy, corefile)
			dnsServices := 0
			for _, s := range r.services {
				switch s.Labels["app.kubernetes.io/component"] {
				case "metrics":
					continue // see checkServiceMonitor
				case "etcd":
					continue // see checkBundledEtcd
				}
				dnsServices++
				checkChartService(t, s, deploy, chartValues(t, c.path())["views"] == "clients")
			}
			if dnsServices == 0 {
				t.Error("no Service reaches the DNS ports")
			}
			for _, pdb := range r.pdbs {
				if pdb.Labels["app.kubernetes.io/component"] == "etcd" {
					continue // see checkBundledEtcd
				}
				checkSelects(t, "PodDisruptionBudget "+pdb.Name, pdb.Spec.Selector, deploy.Spec.Template.Labels)
			}
			for _, sm := range r.serviceMonitors {
				checkServiceMonitor(t, sm, r)
			}
			for _, pr := range r.prometheusRules {
				file := rulesFile
				if pr.Labels["app.kubernetes.io/component"] == "etcd" {
					file = etcdRulesFile
				}
				if !reflect.DeepEqual(pr.Spec, readRuleFile(t, file)) {
					t.Errorf("PrometheusRule %s does not hold the rules of monitoring/%s", pr.Name, file)
				}
			}
			checkDashboard(t, r)
			checkBundledEtcd(t, r, chartValues(t, c.path()))
		})
	}
}

// only returns the release's one Deployment.
func (r *release) only(t *testing.T) *appsv1.Deployment {
	t.Helper()
	if len(r.deployments) != 1 {
		t.Fatalf("%d Deployments, want 1", len(r.deployments))
	}
	for name := range r.deployments {
		return r.deployment(t, name)
	}
	return nil
}

// checkChartService checks that s balances UDP and TCP port 53 to the same
// DNS port of d's pods, and, with clientsApart, that it keeps the clients'
// source addresses.
func checkChartService(t *testing.T, s *corev1.Service, d *appsv1.Deployment, clientsApart bool) {
	checkSelects(t, "Service "+s.Name, &metav1.LabelSelector{MatchLabels: s.Spec.Selector}, d.Spec.Template.Labels)
	served := map[corev1.Protocol]int32{}
	for _, p := range s.Spec.Ports {
		for _, cp := range d.Spec.Template.Spec.Containers[0].Ports {
			if cp.Protocol == p.Protocol && p.TargetPort.String() == cp.Name && p.Port == 53 {
				served[p.Protocol] = cp.ContainerPort
			}
		}
	}
	if len(served) != 2 || served[corev1.ProtocolUDP] != served[corev1.ProtocolTCP] {
		t.Errorf("Service %s serves %v of port 53, want UDP and TCP to one DNS port of the pods", s.Name, served)
	}
	if clientsApart && s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
		t.Errorf("Service %s has externalTrafficPolicy %q: every client would come from a node's address", s.Name, s.Spec.ExternalTrafficPolicy)
	}
}

// checkSelects fails t unless selector, of what, matches podLabels.
func checkSelects(t *testing.T, what string, selector *metav1.LabelSelector, podLabels map[string]string) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(podLabels)) {
		t.Errorf("%s selects %v, not the pods (%v): %v", what, selector, podLabels, err)
	}
}

// checkServiceMonitor checks that sm scrapes /metrics through the metrics
// port of a Service of r whose target is the pods' metrics port.
func checkServiceMonitor(t *testing.T, sm *serviceMonitor, r *release) {
	t.Helper()
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Fatalf("ServiceMonitor %s scrapes %+v, want one endpoint at /metrics", sm.Name, sm.Spec.Endpoints)
	}
	port := sm.Spec.Endpoints[0].Port
	var found []string
	for _, s := range r.services {
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(s.Labels)) {
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.Name == port && p.TargetPort.String() == "metrics" {
				found = append(found, s.Name)
			}
		}
	}
	if len(found) != 1 {
		t.Errorf("ServiceMonitor %s reaches the pods' metrics port through the Services %q, want one", sm.Name, found)
	}
}

// checkDashboard checks the dashboard's ConfigMap, if r has one: the
// dashboard of monitoring/, labelled for the Grafana sidecar.
func checkDashboard(t *testing.T, r *release) {
	t.Helper()
	for _, cm := range r.configMaps {
		json, ok := cm.Data["globaladdr.json"]
		if !ok {
			continue
		}
		if cm.Labels["grafana_dashboard"] != "1" {
			t.Errorf("ConfigMap %s lacks the Grafana sidecar's label: %v", cm.Name, cm.Labels)
		}
		var got, want any
		if err := yaml.Unmarshal([]byte(json), &got); err != nil {
			t.Errorf("ConfigMap %s: %v", cm.Name, err)
		}
		if yaml.Unmarshal(readMonitoring(t, dashboardFile), &want); !reflect.DeepEqual(got, want) {
			t.Errorf("ConfigMap %s does not hold monitoring/%s", cm.Name, dashboardFile)
		}
	}
}

// chartManifestFiles renders the chart with each values file of ci/ into
// a file of dir, without the objects of prometheus-operator's and
// cert-manager's types, which a cluster without their CRDs does not know,
// and returns their paths.
func chartManifestFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, c := range chartCases {
		r := renderRelease(t, c.path())
		var docs []string
		for _, doc := range r.docs {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &meta); err == nil && meta.APIVersion != monitoringV1 && meta.APIVersion != certManagerV1 {
				docs = append(docs, doc)
			}
		}
		f := filepath.Join(dir, c.values)
		writeSecret(t, f, []byte(strings.Join(docs, "---\n")))
		files = append(files, f)
	}
	return files
}
