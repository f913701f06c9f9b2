// Package filepairs measures how a Go package's files tangle: the pairs of
// its non-test files in which each file uses a top-level name defined in
// the other. A package whose files each have one job has few such pairs
// (CoreDNS v1.15.0: etcd 1, forward 4, file 4, kubernetes 8); a pair says
// that a reader of either file must read the other too.
//
// The measure reads the files as text, with comments and strings left out
// (go/scanner): a file uses a function, type, variable or constant of its
// package where its name stands as an identifier, and a method where it
// is called or named as .Name. A name the file defines itself is its own.
// Files that the build constraints of the running platform leave out
// (a fuzz.go behind gofuzz) are not read.
package filepairs

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Pair is two files of a package that use each other's names.
type Pair struct {
	// A and B are the files' base names, A < B.
	A, B string
	// AUses and BUses are the names of B that A uses, and of A that B
	// uses (methods as ".Name"), sorted.
	AUses, BUses []string
}

// String implements fmt.Stringer.
func (p Pair) String() string {
	return fmt.Sprintf("%s <-> %s (%s uses %s; %s uses %s)", p.A, p.B, p.A, strings.Join(p.AUses, " "), p.B, strings.Join(p.BUses, " "))
}

// file is what the measure reads of one file.
type file struct {
	name string
	// defines and uses hold the file's top-level names and the names it
	// uses; a method's as ".Name".
	defines, uses map[string]bool
}

// Of returns the pairs of the package in dir, in the order of their files'
// names.
func Of(dir string) ([]Pair, error) {
	files, err := read(dir)
	if err != nil {
		return nil, err
	}
	var pairs []Pair
	for i, a := range files {
		for _, b := range files[i+1:] {
			if ab, ba := a.usesOf(b), b.usesOf(a); len(ab) > 0 && len(ba) > 0 {
				pairs = append(pairs, Pair{A: a.name, B: b.name, AUses: ab, BUses: ba})
			}
		}
	}
	return pairs, nil
}

// usesOf returns the names defined in o that f uses, sorted.
func (f *file) usesOf(o *file) []string {
	var names []string
	for name := range o.defines {
		if f.uses[name] && !f.defines[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// read reads the package's non-test files in dir that the build context
// takes, sorted by name.
func read(dir string) ([]*file, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*file
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, name); err != nil || !ok {
			continue
		}
		f, err := readFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// readFile reads the names one file defines and uses.
func readFile(path string) (*file, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	f := &file{name: filepath.Base(path), defines: defined(af), uses: map[string]bool{}}
	var s scanner.Scanner
	s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
	for prev := token.ILLEGAL; ; {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.IDENT {
			if prev == token.PERIOD {
				f.uses["."+lit] = true
			}
			f.uses[lit] = true
		}
		prev = tok
	}
	return f, nil
}

// defined returns the top-level names af defines, a method's as ".Name".
func defined(af *ast.File) map[string]bool {
	names := map[string]bool{}
	add := func(name string) {
		if name != "_" && name != "init" {
			names[name] = true
		}
	}
	for _, decl := range af.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				names["."+d.Name.Name] = true
			} else {
				add(d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					add(s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n.Name)
					}
				}
			}
		}
	}
	return names
}
