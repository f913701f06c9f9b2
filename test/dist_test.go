package test

import (
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"

	"sigs.k8s.io/yaml"
)

// mainModule is globaladdr's module path, the SBOM's main component.
const mainModule = "github.com/globaladdr/globaladdr"

// dist is a release's files as make dist leaves them in the repository's
// dist/, named after the version without its leading v.
type dist struct {
	dir, version string
}

// readDist returns the release in dist/, which make test builds (make dist
// BASE=scratch) before it runs the release tests, or ends t through
// prereq.Missing when there is none.
func readDist(t *testing.T) dist {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "dist")
	archives, _ := filepath.Glob(filepath.Join(dir, "globaladdr-*.oci.tar"))
	if len(archives) != 1 {
		prereq.Missing(t, "%s holds %d image archives, want one: run make dist BASE=scratch (make test does) first", dir, len(archives))
	}
	v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(archives[0]), "globaladdr-"), ".oci.tar")
	return dist{dir: dir, version: v}
}

// path returns the path of dist/'s file name.
func (d dist) path(name string) string { return filepath.Join(d.dir, name) }

// archive is the multi-platform image as an OCI archive, its index tagged
// with the version.
func (d dist) archive() string { return d.path("globaladdr-" + d.version + ".oci.tar") }

// chart is the chart as helm package names it.
func (d dist) chart() string { return d.path("globaladdr-" + d.version + ".tgz") }

// sbom is the CycloneDX SBOM of the binaries.
func (d dist) sbom() string { return d.path("globaladdr-" + d.version + ".sbom.cdx.json") }

// binary is p's coredns: coredns-0.1.0-linux-armv7.
func (d dist) binary(p imagePlatform) string {
	return d.path("coredns-" + d.version + "-" + p.os + "-" + p.arch + p.variant)
}

// files are the names of every file make dist must leave, SHA256SUMS last.
func (d dist) files() []string {
	var names []string
	for _, f := range []string{d.archive(), d.chart(), d.sbom()} {
		names = append(names, filepath.Base(f))
	}
	for _, p := range imagePlatforms {
		names = append(names, filepath.Base(d.binary(p)))
	}
	return append(names, "SHA256SUMS")
}

// TestDist checks what make dist left in dist/ (make test runs it in the
// checkout CI cloned, so a fresh clone builds every file): exactly the
// release's files; SHA256SUMS, which sha256sum -c verifies, of every other
// one; each platform's binary, built by Go for it; the chart, whose version
// and appVersion are the release's; and the SBOM, CycloneDX JSON naming
// globaladdr's module at the release's version and CoreDNS at the version
// linked into the binaries. TestImagePlatforms checks the image archive.
func TestDist(t *testing.T) {
	d := readDist(t)
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := slices.Sorted(slices.Values(d.files())); !slices.Equal(names, want) {
		t.Errorf("dist/ holds %q, want %q", names, want)
	}

	t.Run("SHA256SUMS", func(t *testing.T) {
		cmd := exec.Command(prereq.Program(t, "sha256sum", "coreutils"), "--check", "--strict", "SHA256SUMS")
		cmd.Dir = d.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum --check: %v\n%s", err, out)
		}
		sums, err := os.ReadFile(d.path("SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for line := range strings.Lines(string(sums)) {
			_, name, _ := strings.Cut(strings.TrimSpace(line), "  ")
			listed = append(listed, name)
		}
		files := d.files()
		if want := slices.Sorted(slices.Values(files[:len(files)-1])); !slices.Equal(slices.Sorted(slices.Values(listed)), want) {
			t.Errorf("SHA256SUMS lists %q, want %q", listed, want)
		}
	})

	t.Run("binaries", func(t *testing.T) {
		for _, p := range imagePlatforms {
			exe, err := os.ReadFile(d.binary(p))
			if err != nil {
				t.Fatal(err)
			}
			if err := checkPlatformBinary(exe, p); err != nil {
				t.Errorf("%s: %v", d.binary(p), err)
			}
		}
	})

	t.Run("chart", func(t *testing.T) {
		var chart struct{ Name, Version, AppVersion string }
		if err := yaml.Unmarshal([]byte(runHelm(t, "show", "chart", d.chart())), &chart); err != nil {
			t.Fatal(err)
		}
		if chart.Name != "globaladdr" || chart.Version != d.version || chart.AppVersion != d.version {
			t.Errorf("%s is the chart %s %s, appVersion %s; want globaladdr %s, appVersion %[5]s", d.chart(), chart.Name, chart.Version, chart.AppVersion, d.version)
		}
	})

	t.Run("SBOM", func(t *testing.T) { checkSBOM(t, d) })
}

// cdxComponent is what checkSBOM reads of a CycloneDX component.
type cdxComponent struct {
	Name, Version string
}

// checkSBOM checks d's SBOM: CycloneDX JSON whose main component is
// globaladdr's module at the release's version, listing CoreDNS's module
// at the version the linux/amd64 binary's build information names.
func checkSBOM(t *testing.T, d dist) {
	data, err := os.ReadFile(d.sbom())
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat, SpecVersion string
		Metadata               struct{ Component cdxComponent }
		Components             []cdxComponent
	}
	if err := json.Unmarshal(data, &bom); err != nil {
		t.Fatalf("%s: %v", d.sbom(), err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" {
		t.Errorf("%s: bomFormat %q, specVersion %q: not a CycloneDX SBOM", d.sbom(), bom.BOMFormat, bom.SpecVersion)
	}
	if m := bom.Metadata.Component; m.Name != mainModule || m.Version != "v"+d.version {
		t.Errorf("%s describes %s %s, want %s v%s", d.sbom(), m.Name, m.Version, mainModule, d.version)
	}
	info, err := buildinfo.ReadFile(d.binary(imagePlatforms[0]))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range info.Deps {
		want[m.Path] = m.Version
	}
	listed := map[string]string{}
	for _, c := range bom.Components {
		listed[c.Name] = c.Version
	}
	const coredns = "github.com/coredns/coredns"
	if listed[coredns] == "" || listed[coredns] != want[coredns] {
		t.Errorf("%s lists %s at %q, the binary links %q", d.sbom(), coredns, listed[coredns], want[coredns])
	}
	for path := range want {
		if _, ok := listed[path]; !ok {
			t.Errorf("%s lacks the module %s, which the binary links", d.sbom(), path)
		}
	}
}
