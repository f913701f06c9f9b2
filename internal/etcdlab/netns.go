package etcdlab

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
)

// Net is a network of namespaces made by a test: a bridge in a namespace of
// its own, and nodes, each a namespace with one address on the bridge. The
// test process reaches them through a node of its own in its namespace. The
// addresses are 10.x.y.0/24's, which nothing outside the machine ever sees.
// Run as root; everything is removed when the test ends.
type Net struct {
	prefix string // e.g. "ga12345"
	subnet string // e.g. "10.77.3"
	nodes  int
}

// NewNet makes the bridge, and the node that connects the test's own
// namespace to it, at address .254.
func NewNet(t testing.TB) *Net {
	t.Helper()
	port, err := corednstest.FreeTCPPort() // a number no other test of the process has
	if err != nil {
		t.Fatal(err)
	}
	n := &Net{prefix: fmt.Sprintf("ga%d", port), subnet: fmt.Sprintf("10.%d.%d", 100+port%100, port/100%250)}
	hub := n.prefix + "hub"
	run(t, "ip", "netns", "add", hub)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", hub).Run() })
	run(t, "ip", "-n", hub, "link", "add", "br0", "type", "bridge")
	run(t, "ip", "-n", hub, "link", "set", "br0", "up")
	// The test's own node: a veth whose one end stays in this namespace.
	host := n.prefix + "h"
	run(t, "ip", "link", "add", host, "type", "veth", "peer", "name", "p", "netns", hub)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	run(t, "ip", "-n", hub, "link", "set", "p", "name", "h", "master", "br0", "up")
	run(t, "ip", "addr", "add", n.subnet+".254/24", "dev", host)
	run(t, "ip", "link", "set", host, "up")
	return n
}

// Node adds a namespace on the bridge, and returns its name and address.
func (n *Net) Node(t testing.TB) (ns, addr string) {
	t.Helper()
	n.nodes++
	ns = fmt.Sprintf("%sn%d", n.prefix, n.nodes)
	addr = fmt.Sprintf("%s.%d", n.subnet, n.nodes)
	hub := n.prefix + "hub"
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	port := fmt.Sprintf("n%d", n.nodes)
	run(t, "ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", hub)
	run(t, "ip", "-n", hub, "link", "set", port, "master", "br0", "up")
	run(t, "ip", "-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
	run(t, "ip", "-n", ns, "link", "set", "eth0", "up")
	run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	return ns, addr
}

// Cut drops, silently, every packet between the node ns and the addresses
// peers, until Heal: a cable pulled, not a refused connection.
func Cut(t testing.TB, ns string, peers []string) {
	t.Helper()
	set := "{ " + strings.Join(peers, ", ") + " }"
	rules := fmt.Sprintf(`table inet cut {
	chain out { type filter hook output priority 0; ip daddr %s drop; }
	chain in { type filter hook input priority 0; ip saddr %s drop; }
}
`, set, set)
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft in %s: %v\n%s", ns, err, out)
	}
}

// Heal ends the Cut of the node ns.
func Heal(t testing.TB, ns string) {
	t.Helper()
	run(t, "ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "cut")
}

// Process is a program run in a node's namespace.
type Process struct {
	cmd  *exec.Cmd
	out  *lockedbuf.Buffer
	done chan struct{} // closed when it has exited
}

// Run starts program with args in the namespace ns, with env added to the
// test's environment; it is killed when the test ends.
func Run(t testing.TB, ns string, env []string, program string, args ...string) *Process {
	t.Helper()
	p := &Process{out: new(lockedbuf.Buffer), done: make(chan struct{})}
	p.cmd = exec.Command("ip", append([]string{"netns", "exec", ns, program}, args...)...)
	p.cmd.Env = append(p.cmd.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s in %s: %v", program, ns, err)
	}
	go func() { defer close(p.done); _ = p.cmd.Wait() }()
	t.Cleanup(p.Kill)
	return p
}

// Kill kills the process, and waits until it has exited (and released
// what it held, such as etcd's lock on its data).
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Output returns what the process wrote so far.
func (p *Process) Output() string { return p.out.String() }

// run runs a command, and fails t when it fails.
func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
