//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// The two blocks of a path.
const (
	without = iota
	with
)

var variantNames = [2]string{"without", "with"}

// path is a way a query takes through CoreDNS, served by two server blocks
// that differ only by globaladdr.
type path struct {
	name    string
	cache   bool
	backend string // "etcd" or "file"
	// rrl makes the blocks differ by rrl instead: both have globaladdr.
	rrl    bool
	blocks [2]*block
}

// block is one server block: a path without or with globaladdr.
type block struct {
	path    *path
	variant int
	port    int
	srv     *coreDNS // the process serving it
	// metrics makes the block export coredns's metrics on metricsPort.
	metrics     bool
	metricsPort int
}

func (b *block) String() string {
	return fmt.Sprintf("%s %s globaladdr (127.0.0.1:%d)", b.path.name, variantNames[b.variant], b.port)
}

// newPaths returns the three measured paths.
func newPaths() []*path {
	paths := []*path{
		{name: "etcd+cache", cache: true, backend: "etcd"},
		{name: "etcd", backend: "etcd"},
		{name: "file", backend: "file"},
		rrlPath(),
	}
	for _, p := range paths {
		for v := range p.blocks {
			p.blocks[v] = &block{path: p, variant: v}
		}
	}
	return paths
}

// blocksOf returns the blocks of paths without (variant 0) or with
// globaladdr (1).
func blocksOf(paths []*path, variant int) []*block {
	var bs []*block
	for _, p := range paths {
		bs = append(bs, p.blocks[variant])
	}
	return bs
}

// selectPaths returns the paths named in list, comma-separated, in the
// order of paths; all of them when list is empty.
func selectPaths(paths []*path, list string) ([]*path, error) {
	if list == "" {
		return paths, nil
	}
	var names []string
	for _, p := range paths {
		names = append(names, p.name)
	}
	want := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		if findPath(paths, name) == nil {
			return nil, fmt.Errorf("-paths: no path %q; the paths are %s", name, strings.Join(names, ", "))
		}
		want[name] = true
	}
	var selected []*path
	for _, p := range paths {
		if want[p.name] {
			selected = append(selected, p)
		}
	}
	return selected, nil
}

func findPath(paths []*path, name string) *path {
	for _, p := range paths {
		if p.name == name {
			return p
		}
	}
	return nil
}

// corefile returns the Corefile of blocks. The plugins' order is
// plugin.cfg's, not the Corefile's: cache above globaladdr above the backend.
func corefile(blocks []*block, etcdEndpoint, zoneFile string) string {
	var b strings.Builder
	for _, bl := range blocks {
		fmt.Fprintf(&b, "%s:%d {\n\tbind 127.0.0.1\n", zoneOrigin, bl.port)
		if bl.path.cache {
			b.WriteString("\tcache 30\n")
		}
		if bl.metrics {
			fmt.Fprintf(&b, "\tprometheus 127.0.0.1:%d\n", bl.metricsPort)
		}
		if bl.rewrites() {
			fmt.Fprintf(&b, "\tglobaladdr %s %s {\n\t\tttl %d\n\t}\n", globalV4, globalV6, globalTTL)
		}
		b.WriteString(bl.rrlDirective())
		switch bl.path.backend {
		case "etcd":
			fmt.Fprintf(&b, "\tetcd %s {\n\t\tpath /skydns\n\t\tendpoint %s\n\t}\n", zoneOrigin, etcdEndpoint)
		case "file":
			fmt.Fprintf(&b, "\tfile %s %s\n", zoneFile, zoneOrigin)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// coreDNS is a running coredns process.
type coreDNS struct {
	cmd    *exec.Cmd
	log    string        // the file holding its output
	exited chan struct{} // closed when it has exited
}

// startCoreDNS gives each of blocks a free loopback port and starts binary
// with their Corefile, written into dir as Corefile.NAME, and waits until
// every block answers. A port taken in between by someone else makes it try
// again.
func startCoreDNS(ctx context.Context, binary, dir, name string, blocks []*block, etcdEndpoint, zoneFile string) (*coreDNS, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		for _, b := range blocks {
			if b.port, err = freePort(); err != nil {
				return nil, err
			}
			if b.metrics {
				if b.metricsPort, err = freePort(); err != nil {
					return nil, err
				}
			}
		}
		conf := filepath.Join(dir, "Corefile."+name)
		if err = os.WriteFile(conf, []byte(corefile(blocks, etcdEndpoint, zoneFile)), 0o644); err != nil {
			return nil, err
		}
		var c *coreDNS
		if c, err = launch(binary, conf, filepath.Join(dir, "coredns."+name+".log")); err != nil {
			return nil, err
		}
		if err = c.waitReady(ctx, blocks); err == nil {
			for _, b := range blocks {
				b.srv = c
			}
			return c, nil
		}
		c.stop()
		if !strings.Contains(c.output(), "address already in use") {
			break
		}
	}
	return nil, err
}

// launch starts binary on conf, its output going to logFile. The process is
// killed should this one die first.
func launch(binary, conf, logFile string) (*coreDNS, error) {
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	cmd := exec.Command(binary, "-conf", conf)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w (make build)", binary, err)
	}
	c := &coreDNS{cmd: cmd, log: logFile, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// waitReady waits until every block answers, for up to 30 s.
func (c *coreDNS) waitReady(ctx context.Context, blocks []*block) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, b := range blocks {
		for {
			if _, err := query(b.port, zoneOrigin, dns.TypeSOA); err == nil {
				break
			}
			select {
			case <-c.exited:
				return fmt.Errorf("coredns exited: %s", c.output())
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: no answer within 30 s: %s", b, c.output())
			}
		}
	}
	return nil
}

// stop terminates coredns and waits until it has exited.
func (c *coreDNS) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}

// output returns the end of coredns's output.
func (c *coreDNS) output() string {
	b, _ := os.ReadFile(c.log)
	const most = 2000
	if len(b) > most {
		b = b[len(b)-most:]
	}
	return strings.TrimSpace(string(b))
}

// memory returns coredns's resident set size now and its peak (VmRSS and
// VmHWM), in bytes.
func (c *coreDNS) memory() (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) != 3 || fields[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		switch fields[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	if rss == 0 || peak == 0 {
		return 0, 0, errors.New("no VmRSS or VmHWM in /proc/PID/status")
	}
	return rss, peak, s.Err()
}

// goroutines returns the go_goroutines that b's coredns exports on its
// metrics port.
func (b *block) goroutines() (int64, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", b.metricsPort))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "go_goroutines "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no go_goroutines in its metrics", b)
}

// cpuTime returns the CPU time coredns has used so far, user and system, in
// all its threads (USER_HZ resolution: 10 ms).
func (c *coreDNS) cpuTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses: state is
	// the first, utime the 12th and stime the 13th (proc(5)).
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(fields) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	const userHZ = 100 // the unit of /proc's times on every Linux
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// freePort returns a loopback port that was free for both UDP and TCP.
func freePort() (int, error) {
	for range 10 {
		u, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		t, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		u.Close()
		if err == nil {
			t.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free loopback port")
}

// query asks the block on port for name and qtype over UDP.
func query(port int, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	return r, err
}

// checkViews makes sure that the blocks serve what they are meant to before
// they are measured: internal addresses without globaladdr, the global ones
// with it.
func checkViews(paths []*path) error {
	checks := []struct {
		name  string
		qtype uint16
		want  [2]string
	}{
		{"app-000.example.com.", dns.TypeA, [2]string{"10.1.0.1", globalV4}},
		{"app-000.example.com.", dns.TypeAAAA, [2]string{"fd00::1:1", globalV6}},
		{"pub-00.example.com.", dns.TypeA, [2]string{"198.51.100.1", "198.51.100.1"}},
	}
	for _, p := range paths {
		for _, b := range p.blocks {
			for _, c := range checks {
				r, err := query(b.port, c.name, c.qtype)
				if err != nil {
					return fmt.Errorf("%s: %s: %w", b, c.name, err)
				}
				want := c.want[without]
				if b.rewrites() {
					want = c.want[with]
				}
				if got := addresses(r); got != want {
					return fmt.Errorf("%s: %s %s is %q, want %q", b, c.name, dns.TypeToString[c.qtype], got, want)
				}
			}
		}
	}
	return nil
}

// addresses returns the addresses in r's answer, separated by spaces.
func addresses(r *dns.Msg) string {
	var out []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			out = append(out, rr.A.String())
		case *dns.AAAA:
			out = append(out, rr.AAAA.String())
		}
	}
	return strings.Join(out, " ")
}
