package corednstest

import (
	"fmt"
	"io"
	"net"
	"strconv"

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

// FreeTCPPort returns a TCP port the system considers free on every address.
func FreeTCPPort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}
