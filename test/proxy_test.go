package test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections from a loopback port to a target, and can
// cut them: a test puts it between CoreDNS and etcd to take etcd away from
// CoreDNS alone, while the test itself still writes to etcd.
type proxy struct {
	target string
	l      net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

// startProxy starts a proxy to target, closed when t ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: target, l: l, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		l.Close()
		p.Cut()
	})
	return p
}

// Addr returns the address the proxy listens on.
func (p *proxy) Addr() string { return p.l.Addr().String() }

// Cut closes every connection, and refuses new ones until Mend.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Mend lets connections through again.
func (p *proxy) Mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

// forward copies between c and a new connection to the target, in both
// directions, until either ends or the proxy cuts them.
func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer up.Close()
	if !p.track(c, up) {
		return
	}
	defer p.untrack(c, up)
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// track records the connections of a forward, unless the proxy is cut.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range conns {
		p.conns[c] = true
	}
	return true
}

func (p *proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}
