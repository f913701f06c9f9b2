package test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// manualMaxLines is the length of CoreDNS's longest plugin manual, the
// kubernetes plugin's README.md (363 lines in v1.15).
const manualMaxLines = 363

// TestPluginManualLength holds every plugin manual (plugin/*/README.md) to
// the length of CoreDNS's longest: a manual is the reference of a plugin's
// syntax, read as CoreDNS's own are, and the rationale, the history and the
// why go to the plugin's DESIGN.md (issue 38).
func TestPluginManualLength(t *testing.T) {
	files, err := filepath.Glob("../plugin/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no plugin manual found under ../plugin")
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > manualMaxLines {
			t.Errorf("%s has %d lines, more than CoreDNS's longest manual (kubernetes, %d): move rationale to DESIGN.md", file, n, manualMaxLines)
		}
	}
}
