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

// TestMonitoringRules checks each rule file of monitoring/ with
// Prometheus's own tools: `promtool check rules` (syntax, PromQL,
// templates) and `promtool test rules` with its unit tests, which must test
// every alert.
func TestMonitoringRules(t *testing.T) {
	promtool := prereq.Program(t, "promtool", "prometheus")
	for _, file := range ruleFiles {
		testFile := testFileOf(file)
		for _, args := range [][]string{{"check", "rules", file}, {"test", "rules", testFile}} {
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
		if err := yaml.Unmarshal(readMonitoring(t, testFile), &tests); err != nil {
			t.Fatal(err)
		}
		var tested []string
		for _, tc := range tests.Tests {
			for _, a := range tc.AlertRuleTest {
				tested = append(tested, a.Alertname)
			}
		}
		for _, g := range readRuleFile(t, file).Groups {
			for _, r := range g.Rules {
				if !slices.Contains(tested, r.Alert) {
					t.Errorf("%s has no unit test in %s", r.Alert, testFile)
				}
				if r.Annotations["summary"] == "" {
					t.Errorf("%s has no summary", r.Alert)
				}
			}
		}
	}
}
