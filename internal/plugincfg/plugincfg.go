// Package plugincfg reads plugin.cfg, the list of plugins of the globaladdr
// build of CoreDNS, and renders the Go files that compile them in: the blank
// imports and the directive order. It decides no order of its own: plugin.cfg
// is the one place the list is written.
package plugincfg

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"io"
	"sort"
	"strings"
)

// corePluginPath is where a plugin named without a domain lives.
const corePluginPath = "github.com/coredns/coredns/plugin/"

// Plugin is one line of plugin.cfg.
type Plugin struct {
	// Name is the Corefile directive.
	Name string
	// Import is the Go package that registers the directive.
	Import string
}

// Parse reads plugin.cfg: one "directive:package" per line, in execution
// order; blank lines and lines starting with # are skipped.
func Parse(r io.Reader) ([]Plugin, error) {
	var plugins []Plugin
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, pkg, ok := strings.Cut(line, ":")
		if !ok || name == "" || pkg == "" {
			return nil, fmt.Errorf("line %d: %q is not directive:package", n, line)
		}
		if seen[name] {
			return nil, fmt.Errorf("line %d: directive %q listed twice", n, name)
		}
		seen[name] = true
		plugins = append(plugins, Plugin{Name: name, Import: importPath(pkg)})
	}
	return plugins, sc.Err()
}

// importPath expands a CoreDNS plugin's short name; a path whose first
// element is a domain is already complete.
func importPath(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	if strings.Contains(first, ".") {
		return pkg
	}
	return corePluginPath + pkg
}

const header = "// Code generated from plugin.cfg by `go generate`; DO NOT EDIT.\n\n"

// RenderImports returns the Go file of package pkg that imports every plugin.
func RenderImports(pkg string, plugins []Plugin) ([]byte, error) {
	imports := make([]string, 0, len(plugins))
	for _, p := range plugins {
		imports = append(imports, p.Import)
	}
	sort.Strings(imports)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%spackage %s\n\nimport (\n", header, pkg)
	for _, imp := range imports {
		fmt.Fprintf(&b, "\t_ %q\n", imp)
	}
	b.WriteString(")\n")
	return format.Source(b.Bytes())
}

// RenderDirectives returns the Go file of package pkg that declares
// directives, the plugin names in execution order.
func RenderDirectives(pkg string, plugins []Plugin) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%spackage %s\n\n// directives lists the plugins in the order they handle a query.\nvar directives = []string{\n", header, pkg)
	for _, p := range plugins {
		fmt.Fprintf(&b, "\t%q,\n", p.Name)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
