package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// program is a server program a test runs in the background (kube-apiserver,
// Prometheus), started by startProgram.
type program struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once it has exited
}

// startProgram starts cmd, called name, with its output in a file of dir.
// It is killed when t ends; its output is logged if t failed.
func startProgram(t *testing.T, name string, cmd *exec.Cmd, dir string) *program {
	t.Helper()
	logFile := filepath.Join(dir, name+".log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p := &program{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("%s's output:\n%s", name, log)
		}
	})
	return p
}

// signal sends sig to p and waits until it has exited; t fails at once if
// that takes longer than 15 s.
func (p *program) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not exit within 15 s of %v", p.name, sig)
	}
}

// awaitReady waits within for ready to return nil, and fails t at once
// when p exits meanwhile.
func (p *program) awaitReady(t *testing.T, within time.Duration, ready func() error) {
	t.Helper()
	eventually(t, within, p.name+" is ready", func() error {
		select {
		case <-p.exited:
			t.Fatalf("%s exited: %v", p.name, p.cmd.ProcessState)
		default:
		}
		return ready()
	})
}
