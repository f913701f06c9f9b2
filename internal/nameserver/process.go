package nameserver

import (
	"net"
	"os"
	"os/exec"
	"testing"

	"github.com/globaladdr/globaladdr/internal/lockedbuf"
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

// run starts a program in the background and kills it when t ends; it
// returns what the program prints, for the messages of failing tests.
func run(t testing.TB, name string, args ...string) *lockedbuf.Buffer {
	t.Helper()
	out := new(lockedbuf.Buffer)
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
