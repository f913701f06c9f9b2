package source

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe"
)

// TestUplinkFailover runs two named uplinks of fake observers: both are
// served; one that stops answering leaves the union after its failover
// rounds, and the other stays; both down keeps what was served last (fail
// static); one that answers again is served after its failback rounds.
func TestUplinkFailover(t *testing.T) {
	logs := captureLog(t)
	a, b := fake("observer "+t.Name()+"-a"), fake("observer "+t.Name()+"-b")
	a.answer("203.0.113.10", nil)
	b.answer("198.51.100.10", nil)
	s := startSources(t, "globaladdr {\n uplink wan1 from fakeobserver "+t.Name()+"-a\n uplink wan2 from fakeobserver "+t.Name()+"-b\n every 2s\n}", fastLines)
	waitAddrs(t, s, "203.0.113.10 198.51.100.10")

	dead := probe.Errorf(probe.ReasonTimeout, "no answer")
	a.answer("", dead)
	waitAddrs(t, s, "198.51.100.10")
	waitLog(t, logs, "uplink wan1 is down: 3 failed rounds in a row, the last: no answer")

	b.answer("", dead)
	waitLog(t, logs, "uplink wan2 is down")
	waitLog(t, logs, "every uplink with ipv4 addresses is down")
	if got := current(s); got != "198.51.100.10" {
		t.Fatalf("both down: %q, want the last served 198.51.100.10", got)
	}

	a.answer("203.0.113.10", nil)
	waitAddrs(t, s, "203.0.113.10")
	waitLog(t, logs, "uplink wan1 is up again: 5 good rounds in a row")
}

// TestUplinkStandby serves the standby's address only while the first
// priority is down.
func TestUplinkStandby(t *testing.T) {
	a, b := fake("observer "+t.Name()+"-a"), fake("observer "+t.Name()+"-b")
	a.answer("203.0.113.10", nil)
	b.answer("198.51.100.10", nil)
	s := startSources(t, "globaladdr {\n uplink fibre from fakeobserver "+t.Name()+"-a\n uplink lte from fakeobserver "+t.Name()+"-b\n uplink lte priority 2\n}", fastLines)
	waitAddrs(t, s, "203.0.113.10")
	a.answer("", probe.Errorf(probe.ReasonUnreachable, "no route"))
	waitAddrs(t, s, "198.51.100.10")
	a.answer("203.0.113.10", nil)
	waitAddrs(t, s, "203.0.113.10")
}

// TestUplinkCheck holds a static uplink to its TCP check: a listener that
// closes takes it down, the other uplink's address stays; reopened, it is
// served again.
func TestUplinkCheck(t *testing.T) {
	logs := captureLog(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	s := startSources(t, "globaladdr {\n uplink wan1 static 203.0.113.10\n uplink wan1 check tcp "+target+"\n uplink wan2 static 198.51.100.10\n}", func(s *Set) { s.every = 10 * time.Millisecond })
	waitAddrs(t, s, "203.0.113.10 198.51.100.10")
	waitLog(t, logs, "uplink wan1: check tcp "+target+" reaches 127.0.0.1, this is a loopback address")
	ln.Close()
	waitAddrs(t, s, "198.51.100.10")
	waitLog(t, logs, "uplink wan1 is down")
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the log does not say why the check failed:\n%s", logs)
	}
	if ln, err = net.Listen("tcp", target); err != nil {
		t.Skipf("the check's port was taken meanwhile: %v", err)
	}
	defer ln.Close()
	waitAddrs(t, s, "203.0.113.10 198.51.100.10")
}
