package test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// imageUser is the user the image runs as: distroless's nonroot.
const imageUser = "65532:65532"

// imageCorefile is what the images' CoreDNS serves: an internal address
// from hosts, rewritten by globaladdr (imageCase), on port PORT of the
// loopback address ADDR. TestImage's container listens on port 53, which a
// non-root process can only listen on with cap_net_bind_service.
const imageCorefile = `example.org:PORT {
	bind ADDR
	globaladdr 203.0.113.10 {
		ttl 900
	}
	hosts {
		192.168.0.51 www.example.org
	}
}
`

// imageCase is imageCorefile's question and the answer globaladdr rewrites.
var imageCase = test.Case{
	Qname: "www.example.org.", Qtype: dns.TypeA,
	Answer: []dns.RR{test.A("www.example.org. 900 IN A 203.0.113.10")},
}

// TestImage builds the image as `make image BASE=scratch` does, offline,
// from the ./coredns that make built, checks its configuration and its
// /coredns, then runs a container from it on the host's loopback and asks it
// a question whose answer globaladdr rewrites.
//
// It needs root, and buildah or a docker engine; without them it skips.
func TestImage(t *testing.T) {
	e := findImageEngine(t)
	prereq.Root(t, "the image test runs setcap in make image, and a container on the host's network")
	prereq.Program(t, "make", "make")
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "coredns")); err != nil {
		prereq.Missing(t, "the image test needs %s/coredns: run make (or make test) first", root)
	}

	ref := buildImage(t, e, root, "-o", "coredns")
	img := readImage(t, e, ref)
	checkImage(t, img)
	t.Run("serves", func(t *testing.T) {
		checkContainer(t, e, ref, img.Config.Entrypoint)
	})
}

// checkImage checks, in subtests, what every image must be: its
// configuration as the Dockerfile sets it, and its /coredns, a static binary
// with the capability to listen on port 53.
func checkImage(t *testing.T, img image) {
	t.Run("config", func(t *testing.T) {
		c := img.Config
		if c.User != imageUser {
			t.Errorf("user %q, want %q", c.User, imageUser)
		}
		if !slices.Equal(c.Entrypoint, []string{"/coredns"}) {
			t.Errorf("entrypoint %q, want [/coredns]", c.Entrypoint)
		}
		if len(c.Cmd) != 0 {
			t.Errorf("cmd %q, want none", c.Cmd)
		}
		ports := slices.Sorted(maps.Keys(c.ExposedPorts))
		if !slices.Equal(ports, []string{"53/tcp", "53/udp"}) {
			t.Errorf("exposed ports %q, want [53/tcp 53/udp]", ports)
		}
	})
	t.Run("binary", func(t *testing.T) {
		if img.Binary == nil {
			t.Fatal("the image holds no /coredns")
		}
		if mode := img.Binary.FileInfo().Mode(); mode.Perm() != 0o755 || !mode.IsRegular() {
			t.Errorf("/coredns has mode %v, want -rwxr-xr-x", mode)
		}
		if err := checkStatic(img.Content); err != nil {
			t.Errorf("/coredns: %v (was ./coredns built by make?)", err)
		}
		if err := checkNetBindService(img.Binary.PAXRecords["SCHILY.xattr.security.capability"]); err != nil {
			t.Errorf("/coredns: %v", err)
		}
	})
}

// checkContainer runs a container of the image ref on the host's network
// with imageCorefile, answering on port 53 of a loopback address, and checks
// its answer, its version and the user it runs as.
func checkContainer(t *testing.T, e imageEngine, ref string, entrypoint []string) {
	addr := freeLoopback53(t)
	conf := t.TempDir()
	run := t.TempDir()
	// The container's user reads the Corefile and writes its pid file.
	chmod(t, conf, 0o755)
	chmod(t, run, 0o777)
	corefile := strings.NewReplacer("ADDR", addr, "PORT", "53").Replace(imageCorefile)
	if err := os.WriteFile(filepath.Join(conf, "Corefile"), []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	c := e.run(t, ref, entrypoint, map[string]string{conf: "/etc/coredns", run: "/run/coredns"},
		"-conf", "/etc/coredns/Corefile", "-pidfile", "/run/coredns/coredns.pid")
	c.waitStarted(t)
	checkCase(t, net.JoinHostPort(addr, "53"), imageCase)

	fi, err := os.Stat(filepath.Join(run, "coredns.pid"))
	if err != nil {
		t.Fatalf("no pid file: %v\n%s", err, c.output())
	}
	st := fi.Sys().(*syscall.Stat_t)
	if got := fmt.Sprintf("%d:%d", st.Uid, st.Gid); got != imageUser {
		t.Errorf("CoreDNS runs as %s, want %s", got, imageUser)
	}
}

// buildImage runs `make image` with makeArgs (make -o for each binary not
// to rebuild, PLATFORMS) and BASE=scratch, so that no registry is needed,
// under a name of its own, and removes the image when t ends. It returns the
// image's reference.
func buildImage(t *testing.T, e imageEngine, root string, makeArgs ...string) string {
	name := fmt.Sprintf("globaladdr-imagetest-%d-%d", os.Getpid(), rand.Uint32())
	t.Cleanup(func() { e.remove(name+":test", name+":latest") })
	start := time.Now()
	args := append([]string{"-C", root, "image", "ENGINE=" + e.name, "BASE=scratch", "IMAGE=" + name, "VERSION=test"}, makeArgs...)
	out, err := exec.Command("make", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image (%s) took %v", e.name, time.Since(start).Round(time.Millisecond))
	return name + ":test"
}

// image is what TestImage checks of an image.
type image struct {
	Config imageConfig
	// Platform is the configuration's os/architecture[/variant].
	Platform string
	// Binary is /coredns's header in the image's layers, nil if there is
	// none; Content is its content.
	Binary  *tar.Header
	Content []byte
}

// imageConfig is the part of an image's configuration the Dockerfile sets.
type imageConfig struct {
	User         string
	Entrypoint   []string
	Cmd          []string
	ExposedPorts map[string]struct{}
}

// readImage saves the image ref as a docker archive and reads its
// configuration and its /coredns from it: the archive holds the layers as
// tar files, with the extended attributes of their files.
func readImage(t *testing.T, e imageEngine, ref string) image {
	archive := filepath.Join(t.TempDir(), "image.tar")
	e.save(t, ref, archive)
	files, err := readTar(archive, func(*tar.Header) bool { return true })
	if err != nil {
		t.Fatalf("read %s's archive: %v", ref, err)
	}
	var manifest []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(files["manifest.json"].data, &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s's archive: manifest.json holds no single image (%v)", ref, err)
	}
	var config struct {
		Config                    imageConfig
		OS, Architecture, Variant string
	}
	if err := json.Unmarshal(files[manifest[0].Config].data, &config); err != nil {
		t.Fatalf("%s's configuration: %v", ref, err)
	}
	img := image{Config: config.Config, Platform: path.Join(config.OS, config.Architecture, config.Variant)}
	for _, layer := range manifest[0].Layers {
		f, ok := files[layer]
		if !ok {
			t.Fatalf("%s's archive lacks its layer %s", ref, layer)
		}
		found, err := readTarData(f.data, func(h *tar.Header) bool { return path.Clean("/"+h.Name) == "/coredns" })
		if err != nil {
			t.Fatalf("%s's layer %s: %v", ref, layer, err)
		}
		for _, f := range found { // a later layer replaces an earlier one's file
			img.Binary, img.Content = f.header, f.data
		}
	}
	return img
}

// tarFile is a regular file read from a tar archive.
type tarFile struct {
	header *tar.Header
	data   []byte
}

// readTar reads the regular files of the tar file name that keep selects.
func readTar(name string, keep func(*tar.Header) bool) (map[string]tarFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readTarFrom(f, keep)
}

// readTarData reads the regular files that keep selects from data, a tar
// archive, gzip-compressed or not (docker saves layers compressed).
func readTarData(data []byte, keep func(*tar.Header) bool) (map[string]tarFile, error) {
	var r io.Reader = bytes.NewReader(data)
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = gz
	}
	return readTarFrom(r, keep)
}

func readTarFrom(r io.Reader, keep func(*tar.Header) bool) (map[string]tarFile, error) {
	files := map[string]tarFile{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || !keep(h) {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[h.Name] = tarFile{header: h, data: data}
	}
}

// checkStatic returns an error unless exe is an ELF executable without an
// interpreter or shared libraries: all the image's scratch or distroless
// base can run.
func checkStatic(exe []byte) error {
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked: it has an ELF interpreter")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("dynamically linked against %v", libs)
	}
	return nil
}

// checkNetBindService returns an error unless capability, the value of a
// security.capability extended attribute (Linux's struct vfs_cap_data,
// revision 2 as setcap writes it, or 3), puts CAP_NET_BIND_SERVICE into the
// permitted and effective sets.
func checkNetBindService(capability string) error {
	const (
		revisionMask  = 0xff000000
		revision2     = 0x02000000
		revision3     = 0x03000000
		effective     = 0x000001
		netBindSvcBit = 10 // CAP_NET_BIND_SERVICE
	)
	v := []byte(capability)
	if len(v) == 0 {
		return errors.New("no security.capability attribute: setcap cap_net_bind_service=+ep is missing")
	}
	if len(v) < 20 {
		return fmt.Errorf("security.capability attribute of %d bytes", len(v))
	}
	magic := binary.LittleEndian.Uint32(v[0:4])
	if rev := magic & revisionMask; rev != revision2 && rev != revision3 {
		return fmt.Errorf("security.capability revision %#x", rev>>24)
	}
	permitted := binary.LittleEndian.Uint32(v[4:8])
	if permitted&(1<<netBindSvcBit) == 0 || magic&effective == 0 {
		return fmt.Errorf("capabilities %#x (effective flag %v) lack cap_net_bind_service=ep", permitted, magic&effective != 0)
	}
	return nil
}

// freeLoopback53 returns a random loopback address on which port 53 is free
// for TCP and UDP, outside 127.0.0.0/24 where local resolvers listen.
func freeLoopback53(t *testing.T) string {
	for range 20 {
		addr := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
		hostport := net.JoinHostPort(addr, "53")
		l, err := net.Listen("tcp", hostport)
		if err != nil {
			continue
		}
		p, err := net.ListenPacket("udp", hostport)
		l.Close()
		if err != nil {
			continue
		}
		p.Close()
		return addr
	}
	t.Fatal("no loopback address with port 53 free")
	return ""
}

func chmod(t *testing.T, name string, mode os.FileMode) {
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}

// repoRoot returns the repository's root: the directory of go.mod, above
// the test's working directory.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// imageEngine builds, saves, runs and removes images: buildah (no daemon),
// or docker when an engine answers.
type imageEngine struct {
	name string // "buildah" or "docker", as make image's ENGINE takes it
}

// findImageEngine returns buildah if it is installed, else docker if an
// engine answers, and skips t when there is neither.
func findImageEngine(t *testing.T) imageEngine {
	if _, err := exec.LookPath("buildah"); err == nil {
		return imageEngine{"buildah"}
	}
	if exec.Command("docker", "info").Run() == nil {
		return imageEngine{"docker"}
	}
	prereq.Missing(t, "the image test needs buildah (Debian package buildah) or a docker engine")
	return imageEngine{}
}

// command runs the engine with args and fails t, with its output, if it
// fails.
func (e imageEngine) command(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(e.name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", e.name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// save writes the image ref to file as a docker archive.
func (e imageEngine) save(t *testing.T, ref, file string) {
	if e.name == "docker" {
		e.command(t, "save", "-o", file, ref)
		return
	}
	e.command(t, "push", "--quiet", ref, "docker-archive:"+file)
}

// remove removes the images refs, ignoring failures. Of those that are
// buildah's manifest lists, it removes the listed images first: while they
// are there, buildah takes a list's name for the host's image in it, and
// removes neither.
func (e imageEngine) remove(refs ...string) {
	var listed []string
	for _, ref := range refs {
		listed = append(listed, e.listedImages(ref)...)
	}
	slices.Sort(listed)
	for _, images := range [][]string{slices.Compact(listed), refs} {
		if len(images) > 0 {
			exec.Command(e.name, append([]string{"rmi", "--force"}, images...)...).Run()
		}
	}
}

// run starts a container of the image ref on the host's network, with
// mounts (host directory: container directory) read-write, running the
// image's entrypoint with args, and stops and removes it when t ends.
// entrypoint is the image's: docker applies it by itself, buildah run
// doesn't.
func (e imageEngine) run(t *testing.T, ref string, entrypoint []string, mounts map[string]string, args ...string) *container {
	var volumes []string
	for host, dir := range mounts {
		volumes = append(volumes, "--volume", host+":"+dir)
	}
	var argv []string
	if e.name == "docker" {
		name := fmt.Sprintf("globaladdr-imagetest-%d-%d", os.Getpid(), rand.Uint32())
		t.Cleanup(func() { exec.Command("docker", "rm", "--force", name).Run() })
		argv = append([]string{"run", "--rm", "--pull=never", "--network=host", "--name", name}, volumes...)
		argv = append(argv, ref)
	} else {
		ctr := e.command(t, "from", "--pull=never", "--quiet", ref)
		t.Cleanup(func() { exec.Command("buildah", "rm", ctr).Run() })
		argv = append([]string{"run", "--isolation=chroot", "--network=host"}, volumes...)
		argv = append(append(argv, ctr, "--"), entrypoint...)
	}
	return startContainer(t, exec.Command(e.name, append(argv, args...)...))
}

// container is a running container's process, docker run or buildah run in
// the foreground, or the image's binary run by itself, and its output.
type container struct {
	mu    sync.Mutex
	lines []string // the output so far
	ended bool     // the output ended: the process exited
	// changed is closed, and replaced, when lines or ended change.
	changed chan struct{}
}

// startContainer starts cmd, a docker run or buildah run (or a binary taken
// out of an image), and stops it when t ends: both pass SIGTERM on to the
// container's process.
func startContainer(t *testing.T, cmd *exec.Cmd) *container {
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &container{changed: make(chan struct{})}
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		w.CloseWithError(fmt.Errorf("%s exited: %v", cmd.Path, err))
		close(exited)
	}()
	go c.read(r)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(containerTimeout):
			cmd.Process.Kill()
			<-exited
		}
	})
	return c
}

// read reads the container's output from r until it ends.
func (c *container) read(r io.Reader) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		c.update(func() { c.lines = append(c.lines, s.Text()) })
	}
	io.Copy(io.Discard, r) // after a line too long to scan: never block the writer
	c.update(func() { c.ended = true })
}

// update changes c with f and wakes waitFor.
func (c *container) update(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
}

// containerTimeout bounds how long a container may take to start or stop.
const containerTimeout = time.Minute

// waitFor waits until the container prints a line beginning with prefix and
// returns it. t fails if the container exits first, or takes longer than
// containerTimeout.
func (c *container) waitFor(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(containerTimeout)
	for i := 0; ; {
		c.mu.Lock()
		lines, ended, changed := c.lines, c.ended, c.changed
		c.mu.Unlock()
		for ; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], prefix) {
				return lines[i]
			}
		}
		if ended {
			t.Fatalf("the container exited before printing %q:\n%s", prefix, c.output())
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the container printed no %q within %v:\n%s", prefix, containerTimeout, c.output())
		}
	}
}

// waitStarted waits until CoreDNS in the container has started, printing
// its version and then its platform, Go release and commit, and checks that
// the version names globaladdr and that the commit is there (make sets it).
func (c *container) waitStarted(t *testing.T) {
	t.Helper()
	version := c.waitFor(t, "CoreDNS-")
	if !strings.Contains(version, "globaladdr-") {
		t.Errorf("version %q does not name globaladdr", version)
	}
	if release := c.waitFor(t, "linux/"); !releaseLine.MatchString(release) {
		t.Errorf("the line after the version, %q, does not end with the commit built", release)
	}
}

// output returns what the container printed so far.
func (c *container) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}
