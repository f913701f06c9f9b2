package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// stopTimeout is how long CoreDNS gets to exit after SIGTERM before it is
// killed.
const stopTimeout = 10 * time.Second

// demoCorefile returns the demo's Corefile: the internal and the external
// view of example.com, both answering from the etcd at endpoint as an
// authoritative server does (etcdzone).
func demoCorefile(endpoint string) string {
	return fmt.Sprintf(`# internal view: the records as external-dns wrote them
example.com:1053 {
	bind 127.0.0.1
	etcdzone {
		endpoint %[1]s
	}
	etcd example.com
	errors
}

# external view: the same records, internal addresses replaced
example.com:1054 {
	bind 127.0.0.1
	globaladdr 203.0.113.10 2001:db8::10 {
		ttl 900
	}
	etcdzone {
		ns ns1.example.net ns2.example.net
		endpoint %[1]s
	}
	etcd example.com
	errors
}
`, endpoint)
}

// child is a running CoreDNS process.
type child struct {
	cmd *exec.Cmd
	// exited is closed when the process has exited; err then holds how.
	exited chan struct{}
	err    error
}

// startCoreDNS starts binary with corefile; its output goes to ours.
func startCoreDNS(binary, corefile string) (*child, error) {
	cmd := exec.Command(binary, "-conf", corefile)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w (run make build first)", binary, err)
	}
	c := &child{cmd: cmd, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// waitAnswering returns once CoreDNS answers a query on addr over UDP, or an
// error when it exits first or ctx ends. It asks every 100ms.
func (c *child) waitAnswering(ctx context.Context, addr string) error {
	client := &dns.Client{Timeout: 200 * time.Millisecond}
	m := new(dns.Msg)
	m.SetQuestion("example.com.", dns.TypeSOA)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, _, err := client.ExchangeContext(ctx, m, addr); err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("coredns exited before answering on %s: %v", addr, c.err)
		case <-ctx.Done():
			return fmt.Errorf("coredns does not answer on %s: %w", addr, ctx.Err())
		case <-tick.C:
		}
	}
}

// stop asks CoreDNS to exit, kills it if it does not within stopTimeout,
// and waits until it is gone.
func (c *child) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(stopTimeout):
		c.cmd.Process.Kill()
		<-c.exited
	}
}
