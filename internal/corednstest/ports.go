package corednstest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	"github.com/coredns/coredns/plugin/pkg/reuseport"
)

// reservePorts chooses a free port for each placeholder name of corefile.
// The sockets it returns hold the {port:...} ports until the caller closes
// them: they are opened with SO_REUSEPORT, as CoreDNS opens its listeners, so
// CoreDNS can bind beside them while nobody else can take the port.
func reservePorts(corefile string) (held []io.Closer, ports map[string]int, err error) {
	ports = map[string]int{}
	for _, m := range placeholder.FindAllStringSubmatch(corefile, -1) {
		kind, name := m[1], m[2]
		if _, ok := ports[name]; ok {
			continue
		}
		var socks []io.Closer
		if kind == "port" {
			socks, ports[name], err = reserveDNSPort()
		} else {
			ports[name], err = FreeTCPPort()
		}
		held = append(held, socks...)
		if err != nil {
			return held, nil, fmt.Errorf("no free port for {%s:%s}: %w", kind, name, err)
		}
	}
	return held, ports, nil
}

// reserveDNSPort returns a port that is free for TCP and UDP on every
// address, with SO_REUSEPORT sockets holding it.
func reserveDNSPort() ([]io.Closer, int, error) {
	var lastErr error
	for range 20 {
		port, err := FreeTCPPort()
		if err != nil {
			return nil, 0, err
		}
		addr := ":" + strconv.Itoa(port)
		l, err := reuseport.Listen("tcp", addr)
		if err != nil {
			lastErr = err
			continue
		}
		p, err := reuseport.ListenPacket("udp", addr)
		if err != nil {
			l.Close()
			lastErr = err
			continue
		}
		return []io.Closer{l, p}, port, nil
	}
	return nil, 0, lastErr
}

// FreeTCPPort returns a TCP port the system considers free on every address,
// and that no earlier call in this process returned.
func FreeTCPPort() (int, error) {
	var tried []io.Closer // held, so that the system offers other ports
	defer func() { closeAll(tried) }()
	for range 100 {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return 0, err
		}
		tried = append(tried, l)
		if port := l.Addr().(*net.TCPAddr).Port; chosen.claim(port) {
			return port, nil
		}
	}
	return 0, errors.New("the system offers only ports chosen before")
}

// chosen holds every port FreeTCPPort returned in this process. CoreDNS
// keeps state by address across instances of the same process: the
// prometheus plugin starts one listener per address, and never again once
// an instance with it has shut down, and metrics carry a server label that
// outlives its server. A test that took an earlier test's port would find
// no listener, or the earlier test's counts.
var chosen = portSet{ports: map[int]bool{}}

// portSet is a set of ports, safe for concurrent use.
type portSet struct {
	mu    sync.Mutex
	ports map[int]bool
}

// claim adds port to s, and reports whether it was not in s before.
func (s *portSet) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports[port] {
		return false
	}
	s.ports[port] = true
	return true
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}
