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

// coreDNS is a running coredns process, or another name server's.
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
	return start(exec.Command(binary, "-conf", conf), logFile)
}

// launchCorefile writes text as dir/Corefile.NAME and starts o.coredns on
// it, its output going to dir/coredns.NAME.log; it returns the process and
// when it started.
func launchCorefile(o options, dir, name, text string) (*coreDNS, time.Time, error) {
	file := filepath.Join(dir, "Corefile."+name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return nil, time.Time{}, err
	}
	start := time.Now()
	srv, err := launch(o.coredns, file, filepath.Join(dir, "coredns."+name+".log"))
	return srv, start, err
}

// settleMemory waits for settle, so that the garbage of a load is returned
// to the system before the resident memory is read.
func settleMemory(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(settle):
		return nil
	}
}

// start starts cmd, its output going to logFile. The process is killed
// should this one die first.
func start(cmd *exec.Cmd, logFile string) (*coreDNS, error) {
	out, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	binary := cmd.Path
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

// waitSOA waits, for up to within, until the server on port answers zone's
// SOA query with NOERROR: until it has loaded the zone.
func (c *coreDNS) waitSOA(ctx context.Context, port int, zone string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if r, err := query(port, zone, dns.TypeSOA); err == nil && r.Rcode == dns.RcodeSuccess {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited: %s", c.cmd.Path, c.output())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond): // polling the load
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not loaded within %s: %s", zone, within, c.output())
		}
	}
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
	g, err := metric(b.metricsPort, "go_goroutines")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b, err)
	}
	return int64(g), nil
}

// metric returns the value of the metric name, one without labels, that a
// coredns exports on port.
func metric(port int, name string) (float64, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), name+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in the metrics on port %d", name, port)
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
	return exchange(port, m)
}

// exchange sends m to the block on port over UDP.
func exchange(port int, m *dns.Msg) (*dns.Msg, error) {
	c := dns.Client{Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	return r, err
}
