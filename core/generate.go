//go:build ignore

// This program writes zplugin.go and zdirectives.go from ../plugin.cfg.
// Run it with `go generate ./...` from the repository root.
package main

import (
	"log"
	"os"

	"github.com/globaladdr/globaladdr/internal/plugincfg"
)

func main() {
	f, err := os.Open("../plugin.cfg")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	plugins, err := plugincfg.Parse(f)
	if err != nil {
		log.Fatalf("plugin.cfg: %v", err)
	}
	write("zplugin.go", plugincfg.RenderImports, plugins)
	write("zdirectives.go", plugincfg.RenderDirectives, plugins)
}

func write(file string, render func(string, []plugincfg.Plugin) ([]byte, error), plugins []plugincfg.Plugin) {
	src, err := render("core", plugins)
	if err != nil {
		log.Fatalf("%s: %v", file, err)
	}
	if err := os.WriteFile(file, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
