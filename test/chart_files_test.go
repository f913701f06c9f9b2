package test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestChartFilesAreMonitoring checks that the chart's copies of the alerting
// rules and the dashboard are monitoring/'s, byte for byte: the chart holds
// copies, not links, since helm warns on every render about links out of a
// chart. `make chart-files` copies them.
func TestChartFilesAreMonitoring(t *testing.T) {
	for _, name := range []string{rulesFile, etcdRulesFile, dashboardFile} {
		chart := filepath.Join(chartDir, "files", name)
		if fi, err := os.Lstat(chart); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			t.Errorf("%s: want a copy of monitoring/%s, not a link (%v)", chart, name, err)
			continue
		}
		a, err := os.ReadFile(chart)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("..", "monitoring", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from monitoring/%s: run make chart-files", chart, name)
		}
	}
}
