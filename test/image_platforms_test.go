package test

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"
)

// imagePlatform is a platform of the multi-platform image.
type imagePlatform struct {
	os, arch, variant string
	// machine is the ELF machine of the platform's binaries.
	machine elf.Machine
	// qemu is the program of Debian's qemu-user-static that runs them on
	// another machine.
	qemu string
}

// imagePlatforms are the platforms of a release: the Makefile's
// TEST_PLATFORMS, whose binaries and image make dist builds.
var imagePlatforms = []imagePlatform{
	{os: "linux", arch: "amd64", machine: elf.EM_X86_64, qemu: "qemu-x86_64-static"},
	{os: "linux", arch: "arm64", machine: elf.EM_AARCH64, qemu: "qemu-aarch64-static"},
	{os: "linux", arch: "arm", variant: "v7", machine: elf.EM_ARM, qemu: "qemu-arm-static"},
}

// String returns the platform as make image's PLATFORMS and a manifest
// list name it: linux/arm/v7.
func (p imagePlatform) String() string {
	return path.Join(p.os, p.arch, p.variant)
}

// TestImagePlatforms checks the multi-platform image of dist/'s archive,
// which make dist built (as `make image PLATFORMS=...` does, with buildah,
// from the binaries it cross-compiled): its index, under the release's
// tag, lists one image for each platform. Each platform's image, pulled
// from the archive into buildah, must be as TestImage checks the host's,
// and its /coredns be a binary for the platform, built by Go for it, which
// answers a question whose answer globaladdr rewrites: run by itself on the
// host's platform and under qemu's user-mode emulation on the others.
//
// It needs root, buildah and qemu-user-static; without them it skips.
func TestImagePlatforms(t *testing.T) {
	prereq.Root(t, "buildah's image store")
	prereq.Program(t, "buildah", "buildah")
	d := readDist(t)
	e := imageEngine{"buildah"}
	images := archiveImages(t, d)
	var platforms []string
	for _, p := range imagePlatforms {
		platforms = append(platforms, p.String())
	}
	if got, want := slices.Sorted(maps.Keys(images)), slices.Sorted(slices.Values(platforms)); !slices.Equal(got, want) {
		t.Errorf("%s's index has images for %q, want %q", d.archive(), got, want)
	}
	for _, p := range imagePlatforms {
		t.Run(p.String(), func(t *testing.T) {
			if _, ok := images[p.String()]; !ok {
				t.Fatalf("%s has no image for %s", d.archive(), p)
			}
			id := e.command(t, "pull", "--quiet", "--platform", p.String(), "oci-archive:"+d.archive()+":"+d.version)
			t.Cleanup(func() { e.remove(id) })
			img := readImage(t, e, id)
			checkImage(t, img)
			t.Run("platform", func(t *testing.T) {
				if img.Platform != p.String() {
					t.Errorf("the image's configuration is for %s, want %s", img.Platform, p)
				}
				if err := checkPlatformBinary(img.Content, p); err != nil {
					t.Errorf("/coredns: %v", err)
				}
			})
			t.Run("serves", func(t *testing.T) { checkEmulated(t, img.Content, p) })
		})
	}
}

// archiveImages returns the digest of each image of the index that d's
// archive tags with the release's version, by platform (linux/arm/v7).
func archiveImages(t *testing.T, d dist) map[string]string {
	files, err := readTar(d.archive(), func(h *tar.Header) bool {
		return h.Name == "index.json" || strings.HasPrefix(h.Name, "blobs/")
	})
	if err != nil {
		t.Fatalf("%s: %v", d.archive(), err)
	}
	blob := func(digest string) []byte {
		f, ok := files[path.Join("blobs", strings.Replace(digest, ":", "/", 1))]
		if !ok {
			t.Fatalf("%s lacks the blob %s", d.archive(), digest)
		}
		return f.data
	}
	var top struct {
		Manifests []struct {
			Digest      string
			Annotations map[string]string
		}
	}
	if err := json.Unmarshal(files["index.json"].data, &top); err != nil {
		t.Fatalf("%s's index.json: %v", d.archive(), err)
	}
	for _, m := range top.Manifests {
		if m.Annotations["org.opencontainers.image.ref.name"] == d.version {
			return listImages(t, d.archive()+":"+d.version, blob(m.Digest))
		}
	}
	t.Fatalf("%s's index.json tags nothing %s", d.archive(), d.version)
	return nil
}

// manifestList is what the tests read of buildah's manifest list.
type manifestList struct {
	Manifests []struct {
		Digest   string
		Platform struct{ OS, Architecture, Variant string }
	}
}

// manifestList returns the manifest list ref.
func (e imageEngine) manifestList(ref string) (manifestList, error) {
	var l manifestList
	out, err := exec.Command(e.name, "manifest", "inspect", ref).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = fmt.Errorf("%v\n%s", err, exit.Stderr)
	}
	if err != nil {
		return l, fmt.Errorf("%s manifest inspect %s: %w", e.name, ref, err)
	}
	return l, json.Unmarshal(out, &l)
}

// listImages returns the digest of each image of the manifest list or
// index ref, given as JSON, by platform (linux/arm/v7). t fails if ref
// lists two images for a platform.
func listImages(t *testing.T, ref string, list []byte) map[string]string {
	var l manifestList
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	images := map[string]string{}
	for _, m := range l.Manifests {
		p := path.Join(m.Platform.OS, m.Platform.Architecture, m.Platform.Variant)
		if _, ok := images[p]; ok {
			t.Errorf("%s lists two images for %s", ref, p)
		}
		images[p] = m.Digest
	}
	return images
}

// listedImages returns the IDs of the images of ref if it is a manifest
// list of buildah's, else none: removing the list leaves them.
func (e imageEngine) listedImages(ref string) []string {
	if e.name != "buildah" {
		return nil
	}
	l, err := e.manifestList(ref)
	if err != nil {
		return nil
	}
	var ids []string
	for _, m := range l.Manifests {
		id, err := exec.Command("buildah", "inspect", "--type", "image", "--format", "{{.FromImageID}}", ref+"@"+m.Digest).Output()
		if err == nil {
			ids = append(ids, strings.TrimSpace(string(id)))
		}
	}
	return ids
}

// checkPlatformBinary returns an error unless exe is an ELF executable for
// p's machine that Go built for p (GOOS, GOARCH, GOARM), without cgo.
func checkPlatformBinary(exe []byte, p imagePlatform) error {
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Machine != p.machine {
		return fmt.Errorf("an ELF executable for %v, want %v", f.Machine, p.machine)
	}
	info, err := buildinfo.Read(bytes.NewReader(exe))
	if err != nil {
		return err
	}
	want := map[string]string{"GOOS": p.os, "GOARCH": p.arch, "CGO_ENABLED": "0"}
	if p.arch == "arm" {
		want["GOARM"] = strings.TrimPrefix(p.variant, "v")
	}
	for _, s := range info.Settings {
		if v, ok := want[s.Key]; ok && v != s.Value {
			return fmt.Errorf("built with %s=%s, want %s", s.Key, s.Value, v)
		}
		delete(want, s.Key)
	}
	if len(want) > 0 {
		return fmt.Errorf("its build information lacks %v", slices.Sorted(maps.Keys(want)))
	}
	return nil
}

// checkEmulated runs exe, p's CoreDNS, with imageCorefile on ports of the
// loopback address that the system chooses, by itself on the host's
// platform and under qemu-user-static's emulation on the others, and checks
// its answer over UDP and TCP.
func checkEmulated(t *testing.T, exe []byte, p imagePlatform) {
	dir := t.TempDir()
	bin, conf := filepath.Join(dir, "coredns"), filepath.Join(dir, "Corefile")
	corefile := strings.NewReplacer("ADDR", "127.0.0.1", "PORT", "0").Replace(imageCorefile)
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{bin, "-conf", conf}
	if p.os != runtime.GOOS || p.arch != runtime.GOARCH {
		argv = append([]string{prereq.Program(t, p.qemu, "qemu-user-static")}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c := startContainer(t, cmd)
	c.waitStarted(t)
	c.waitFor(t, p.os+"/"+p.arch+", ") // the platform CoreDNS says it runs on, after its version

	ports, err := boundPorts(cmd.Process.Pid)
	if err != nil {
		t.Fatalf("%v\n%s", err, c.output())
	}
	for _, network := range networks {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[network]))
		if err := compare(imageCase, exchange(t, network, addr, imageCase.Msg())); err != nil {
			t.Errorf("%s over %s: %v", imageCase.Qname, network, err)
		}
	}
}

// boundPorts returns the port of the process pid's listening TCP socket and
// of its UDP socket, by network ("tcp", "udp"), read from /proc: its open
// sockets' inodes (/proc/PID/fd) in its network namespace's tables of IPv4
// sockets.
func boundPorts(pid int) (map[string]int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	ports := map[string]int{}
	for network, state := range map[string]string{"tcp": "0A", "udp": "07"} { // TCP_LISTEN, TCP_CLOSE
		table, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, network))
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(table)) {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != state || !inodes[f[9]] {
				continue
			}
			_, hex, _ := strings.Cut(f[1], ":")
			port, err := strconv.ParseUint(hex, 16, 16)
			if err != nil {
				return nil, fmt.Errorf("/proc/%d/net/%s: %q: %v", pid, network, line, err)
			}
			ports[network] = int(port)
		}
		if ports[network] == 0 {
			return nil, fmt.Errorf("process %d has no %s socket in /proc/%[1]d/net/%[2]s", pid, network)
		}
	}
	return ports, nil
}
