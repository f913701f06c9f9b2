package nameserver

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// FreeLoopbackAddr returns a loopback address with a port that was free for
// TCP and UDP when chosen.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		p, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			p.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port")
	return ""
}

// output collects a process's output, for the messages of failing tests.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// run starts a program in the background and kills it when t ends.
func run(t testing.TB, name string, args ...string) *output {
	t.Helper()
	out := new(output)
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return out
}

func writeFile(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
