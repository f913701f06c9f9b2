package test

import (
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// monitoringV1 is the API group and version of prometheus-operator's
// ServiceMonitor and PrometheusRule.
const monitoringV1 = "monitoring.coreos.com/v1"

// The monitoring objects of the chart, as far as it sets them: the fields
// of prometheus-operator's monitoring.coreos.com/v1 types (its CRDs) with
// their JSON names, so that a strict decoding fails on a field the chart
// misspells or misplaces. The main module does not depend on
// prometheus-operator for them.
type (
	serviceMonitor struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              struct {
			Selector  metav1.LabelSelector `json:"selector"`
			Endpoints []struct {
				Port     string `json:"port"`
				Path     string `json:"path"`
				Interval string `json:"interval"`
			} `json:"endpoints"`
		} `json:"spec"`
	}

	prometheusRule struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              ruleFile `json:"spec"`
	}
)

// ruleFile is a Prometheus rule file, and a PrometheusRule's spec.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// monitoringDir is monitoring/, relative to this package.
const monitoringDir = "../monitoring"

// The files of monitoring/, which the chart's files/ links to.
const (
	rulesFile     = "globaladdr-rules.yaml"
	rulesTestFile = "globaladdr-rules.test.yaml"
	dashboardFile = "globaladdr-dashboard.json"
)

// readMonitoring returns the content of the file name of monitoring/.
func readMonitoring(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(monitoringDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readRules decodes monitoring/'s rule file strictly.
func readRules(t *testing.T) ruleFile {
	t.Helper()
	var rules ruleFile
	if err := yaml.UnmarshalStrict(readMonitoring(t, rulesFile), &rules); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	return rules
}
