package source

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// startFileSource writes value into a file and starts a from file source
// on it, with the real poll interval.
func startFileSource(t *testing.T, value string) (*started, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wan")
	write(t, path, value)
	s := startSources(t, "globaladdr {\n from file "+path+"\n}", nil)
	return s, path
}

func write(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace replaces the file at path by one holding value, atomically.
func replace(t *testing.T, path, value string) {
	t.Helper()
	write(t, path+".new", value)
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func TestSourceFileInPlace(t *testing.T) {
	t.Parallel()
	s, path := startFileSource(t, "203.0.113.10\n")
	waitAddrs(t, s, "203.0.113.10")
	for _, v := range []string{"203.0.113.11", "203.0.113.12 2001:db8::12", "203.0.113.13"} {
		write(t, path, v+"\n") // truncates and writes the same inode, same size
		t.Logf("file written in place: %s served after %v", v, waitAddrs(t, s, v))
	}
}

func TestSourceFileRename(t *testing.T) {
	t.Parallel()
	s, path := startFileSource(t, "203.0.113.10\n")
	waitAddrs(t, s, "203.0.113.10")
	for _, v := range []string{"203.0.113.11", "198.51.100.7 2001:db8::7"} {
		replace(t, path, v+"\n")
		t.Logf("file replaced by rename: %s served after %v", v, waitAddrs(t, s, v))
	}
}

// configMap is a directory laid out as the kubelet lays out a ConfigMap
// volume: the key is a symlink to ..data/KEY, ..data a symlink to a
// directory named after the time of the update, holding the files. An update
// writes a new such directory, points a new symlink at it, renames that over
// ..data, and removes the old directory.
type configMap struct {
	dir     string
	version int
}

func newConfigMap(t *testing.T, key, value string) *configMap {
	m := &configMap{dir: t.TempDir()}
	m.update(t, key, value)
	if err := os.Symlink(filepath.Join("..data", key), filepath.Join(m.dir, key)); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *configMap) update(t *testing.T, key, value string) {
	t.Helper()
	old := m.data()
	m.version++
	if err := os.Mkdir(filepath.Join(m.dir, m.data()), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(m.dir, m.data(), key), value)
	tmp := filepath.Join(m.dir, "..data_tmp")
	if err := os.Symlink(m.data(), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if m.version > 1 {
		if err := os.RemoveAll(filepath.Join(m.dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

func (m *configMap) data() string { return fmt.Sprintf("..2026_01_01_00_00_00.%09d", m.version) }

func TestSourceFileConfigMapSwap(t *testing.T) {
	t.Parallel()
	m := newConfigMap(t, "wan", "203.0.113.10\n")
	s := startSources(t, "globaladdr {\n from file "+filepath.Join(m.dir, "wan")+"\n}", nil)
	waitAddrs(t, s, "203.0.113.10")
	for _, v := range []string{"203.0.113.11", "203.0.113.12", "2001:db8::12"} {
		m.update(t, "wan", "# written by the WAN hook\n"+v+"\n")
		t.Logf("ConfigMap ..data swapped: %s served after %v", v, waitAddrs(t, s, v))
	}
}

func TestSourceFileDeleteRecreate(t *testing.T) {
	t.Parallel()
	s, path := startFileSource(t, "203.0.113.10\n")
	src := "file " + path
	waitAddrs(t, s, "203.0.113.10")

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitErrors(t, src, 1)
	if current(s) != "203.0.113.10" || !s.Ready() {
		t.Fatalf("file deleted: want the last good address kept, have %q", current(s))
	}
	write(t, path, "203.0.113.20\n")
	t.Logf("file re-created: served after %v", waitAddrs(t, s, "203.0.113.20"))
}

func TestSourceFileBadValues(t *testing.T) {
	t.Parallel()
	s, path := startFileSource(t, "203.0.113.10\n")
	src := "file " + path
	waitAddrs(t, s, "203.0.113.10")
	for i, bad := range []string{"", "garbage\n", "203.0.113.11 192.168.0.51\n", "# 203.0.113.11\n"} {
		replace(t, path, bad) // atomically: a write in place may be seen half done

		waitErrors(t, src, float64(i+1))
		if current(s) != "203.0.113.10" {
			t.Fatalf("file holds %q: want the last good address kept, have %q", bad, current(s))
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	waitErrors(t, src, 5)
	if current(s) != "203.0.113.10" {
		t.Fatalf("path is a directory: want the last good address kept, have %q", current(s))
	}
}

func TestSourceFileNotReadyUntilValid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "wan")
	s := startSources(t, "globaladdr {\n from file "+path+"\n}", nil)
	waitErrors(t, "file "+path, 1)
	if s.Ready() || current(s) != "" {
		t.Fatalf("no file: want not ready and no address, have %q", current(s))
	}
	replace(t, path, "garbage\n")
	waitErrors(t, "file "+path, 2)
	if s.Ready() {
		t.Fatal("garbage in the file: want not ready")
	}
	write(t, path, "203.0.113.10\n")
	t.Logf("first valid value served after %v", waitAddrs(t, s, "203.0.113.10"))
	if !s.Ready() {
		t.Fatal("want ready")
	}
}
