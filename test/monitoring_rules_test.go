package test

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/prereq"
	"sigs.k8s.io/yaml"
)

// TestMonitoringRules checks monitoring/'s rule file with Prometheus's own
// tools: `promtool check rules` (syntax, PromQL, templates) and `promtool
// test rules` with its unit tests, which must test every alert.
func TestMonitoringRules(t *testing.T) {
	promtool := prereq.Program(t, "promtool", "prometheus")
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, promtool, args...)
		cmd.Dir = monitoringDir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}

	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(readMonitoring(t, rulesTestFile), &tests); err != nil {
		t.Fatal(err)
	}
	var tested []string
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			tested = append(tested, a.Alertname)
		}
	}
	for _, g := range readRules(t).Groups {
		for _, r := range g.Rules {
			if !slices.Contains(tested, r.Alert) {
				t.Errorf("%s has no unit test in %s", r.Alert, rulesTestFile)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s has no summary", r.Alert)
			}
		}
	}
}
