// Package netlab builds labs of network namespaces for tests, so that a test
// with routers, multicast and servers of its own sends nothing outside the
// machine. The test itself runs in a network namespace of its own (Enter),
// the lab's LAN, where the servers it starts in process listen; the lab's
// other hosts are named namespaces (Lab.Namespace) joined by veth pairs
// (Lab.Link), where programs run (NS.Start) and sockets are opened (NS.Do).
// It needs root and iproute2; without them the test skips (fails under
// CI=true).
package netlab

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"

	"golang.org/x/sys/unix"
)

// insideEnv names, in the environment of the re-executed test binary, the
// test that runs in its own network namespace.
const insideEnv = "NETLAB_INSIDE"

// Enter runs the test or benchmark tb in a network namespace of its own.
// Called from the test binary as go test started it, it runs the binary
// again for tb alone (-test.run=^NAME$, or -test.bench=^NAME$ for a
// benchmark, with the other flags it was given) in a new network namespace,
// passes its output on, fails tb if it failed (a benchmark skips, done),
// and returns false: tb returns at once. Called in the new namespace, it brings the loopback
// interface up and returns true: tb goes on there. The new namespace has a
// mount namespace of its own too, for Hosts. Call it first, from a
// top-level test or benchmark.
func Enter(tb testing.TB) bool {
	tb.Helper()
	if os.Getenv(insideEnv) == tb.Name() {
		mustRun(tb, "ip", "link", "set", "lo", "up")
		return true
	}
	prereq.Root(tb, "a lab of network namespaces")
	prereq.Program(tb, "ip", "iproute2")
	var args []string
	for _, arg := range os.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch {
		case name == "test.run", name == "test.bench", name == "test.count", strings.HasSuffix(name, "profile"):
		default:
			args = append(args, arg)
		}
	}
	only := "^" + tb.Name() + "$"
	if _, ok := tb.(*testing.B); ok {
		args = append(args, "-test.run=^$", "-test.bench="+only)
	} else {
		args = append(args, "-test.run="+only)
	}
	cmd := exec.Command(os.Args[0], append(args, "-test.count=1")...)
	cmd.Env = append(os.Environ(), insideEnv+"="+tb.Name())
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s in its network namespace: %v (its output is above)", tb.Name(), err)
	}
	if _, ok := tb.(*testing.B); ok {
		// Else the benchmark, done at once, would run again with a
		// greater b.N.
		tb.Skip("ran in a network namespace of its own: its results are above")
	}
	return false
}

// Hosts gives names addresses for the test that Enter runs, and every
// program it starts (in the lab's namespaces too): /etc/hosts, in its mount
// namespace alone, holds localhost and hosts (name: address). Call it once,
// after Enter.
func Hosts(tb testing.TB, hosts map[string]string) {
	tb.Helper()
	if os.Getenv(insideEnv) != tb.Name() {
		tb.Fatal("netlab.Hosts outside netlab.Enter: it would change the machine's /etc/hosts")
	}
	var b strings.Builder
	b.WriteString("127.0.0.1 localhost\n::1 localhost\n")
	for name, addr := range hosts {
		fmt.Fprintf(&b, "%s %s\n", addr, name)
	}
	file := filepath.Join(tb.TempDir(), "hosts")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	// Private first: a bind mount must not reach the machine's namespace.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		tb.Fatalf("making the mounts private: %v", err)
	}
	if err := unix.Mount(file, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
		tb.Fatalf("mounting %s on /etc/hosts: %v", file, err)
	}
}

// Lab is a test's named network namespaces; the test's own is its LAN.
type Lab struct {
	t      testing.TB
	prefix string
}

// New returns a lab whose namespaces are removed when t ends. Call it in the
// namespace Enter made.
func New(t testing.TB) *Lab {
	return &Lab{t: t, prefix: fmt.Sprintf("netlab%d-", os.Getpid())}
}

// NS is a network namespace of a lab.
type NS struct {
	lab  *Lab
	name string // "" for the test's own
}

// Self is the test's own namespace, the LAN.
func (l *Lab) Self() *NS { return &NS{lab: l} }

// Namespace makes the named namespace name, with its loopback up.
func (l *Lab) Namespace(name string) *NS {
	ns := &NS{lab: l, name: l.prefix + name}
	mustRun(l.t, "ip", "netns", "add", ns.name)
	l.t.Cleanup(func() { run("ip", "netns", "del", ns.name) })
	ns.IP("link", "set", "lo", "up")
	return ns
}

// Name is the namespace's name for ip netns ("" for the test's own).
func (ns *NS) Name() string { return ns.name }

// Link joins a and b by a veth pair, aDev in a and bDev in b, up, with the
// address aAddr and bAddr (CIDR, "" for none).
func (l *Lab) Link(a *NS, aDev, aAddr string, b *NS, bDev, bAddr string) {
	peer := []string{"link", "add", aDev, "type", "veth", "peer", "name", bDev}
	if b.name != "" {
		peer = append(peer, "netns", b.name)
	}
	a.IP(peer...)
	for _, end := range []struct {
		ns        *NS
		dev, addr string
	}{{a, aDev, aAddr}, {b, bDev, bAddr}} {
		if end.addr != "" {
			end.ns.IP("addr", "add", end.addr, "dev", end.dev)
		}
		end.ns.IP("link", "set", end.dev, "up")
	}
}

// IP runs ip ARGS in the namespace, and fails the test if it fails.
func (ns *NS) IP(args ...string) {
	if ns.name != "" {
		args = append([]string{"-n", ns.name}, args...)
	}
	mustRun(ns.lab.t, "ip", args...)
}

// Run runs the program with args in the namespace and returns its output;
// it fails the test if the program fails.
func (ns *NS) Run(prog string, args ...string) string {
	c := ns.command(prog, args...)
	return mustRun(ns.lab.t, c[0], c[1:]...)
}

// Command returns the command that runs prog with args in the namespace.
func (ns *NS) Command(prog string, args ...string) *exec.Cmd {
	c := ns.command(prog, args...)
	return exec.Command(c[0], c[1:]...)
}

func (ns *NS) command(prog string, args ...string) []string {
	if ns.name == "" {
		return append([]string{prog}, args...)
	}
	return append([]string{"ip", "netns", "exec", ns.name, prog}, args...)
}

// Do calls f on a thread that has entered the namespace: the sockets f
// opens belong to it, and stay there when used from any goroutine. The
// thread then returns to the test's namespace (or ends, if it can't).
func (ns *NS) Do(f func() error) error {
	if ns.name == "" {
		return f()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(home)
		there, err := unix.Open("/run/netns/"+ns.name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(there)
		if err := unix.Setns(there, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering %s: %w", ns.name, err)
			return
		}
		errc <- f()
		// A thread that can't return stays locked to the goroutine, and
		// Go ends it with the goroutine.
		if unix.Setns(home, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}

// mustRun runs prog with args, and fails t with its output if it fails.
func mustRun(t testing.TB, prog string, args ...string) string {
	t.Helper()
	out, err := run(prog, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
	return out
}

func run(prog string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
