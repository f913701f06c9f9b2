package test

import (
	"os"
	"path/filepath"
	"strings"
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
			JobLabel  string               `json:"jobLabel,omitempty"`
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

// The files of monitoring/, which the chart's files/ copies: the alerts on
// CoreDNS, those on the bundled etcd, and their unit tests (a rule file's,
// NAME.test.yaml beside NAME.yaml), and the dashboard.
const (
	rulesFile     = "globaladdr-rules.yaml"
	etcdRulesFile = "etcd-rules.yaml"
	dashboardFile = "globaladdr-dashboard.json"
)

// ruleFiles are the rule files of monitoring/.
var ruleFiles = []string{rulesFile, etcdRulesFile}

// testFileOf is the unit tests' file of the rule file name.
func testFileOf(name string) string { return strings.TrimSuffix(name, ".yaml") + ".test.yaml" }

// readMonitoring returns the content of the file name of monitoring/.
func readMonitoring(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(monitoringDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readRules decodes monitoring/'s rule file of the alerts on CoreDNS
// strictly.
func readRules(t *testing.T) ruleFile {
	t.Helper()
	return readRuleFile(t, rulesFile)
}

// readRuleFile decodes monitoring/'s rule file name strictly.
func readRuleFile(t *testing.T, name string) ruleFile {
	t.Helper()
	var rules ruleFile
	if err := yaml.UnmarshalStrict(readMonitoring(t, name), &rules); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rules
}
