package filepairs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOf(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a.go": "package p\n\ntype T struct{}\n\nfunc (T) run() { helper() }\n\nfunc own() {}\n",
		"b.go": "package p\n\nfunc helper() { var t T; t.run() }\n",
		// c names a's and b's names only in a comment and a string, and
		// defines own of its own; d uses run as a field, not a method.
		"c.go":      "package p\n\n// helper T run\nvar s = \"helper T\"\n\nfunc own() { _ = s }\n",
		"d.go":      "package p\n\nvar v struct{ x int }\n\nfunc use() { _ = v.x; helper() }\n",
		"e_test.go": "package p\n\nfunc helperForTest() { own(); helper() }\n",
		"f.go":      "//go:build never\n\npackage p\n\nfunc never() { helper() }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pairs, err := Of(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 1 || pairs[0].A != "a.go" || pairs[0].B != "b.go" || pairs[0].String() != "a.go <-> b.go (a.go uses helper; b.go uses .run T)" {
		t.Errorf("pairs: %v, want a.go <-> b.go alone", pairs)
	}
}
