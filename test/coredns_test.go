package test

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin/pkg/reuseport"

	// The globaladdr build: every plugin of plugin.cfg, in plugin.cfg's order.
	_ "github.com/globaladdr/globaladdr/core"
)

// coreDNS is a CoreDNS instance running inside the test process, started by
// startCoreDNS.
type coreDNS struct {
	inst *caddy.Instance
	// ports maps each placeholder name of the Corefile to its port.
	ports map[string]int
}

// Port placeholders of a Corefile given to startCoreDNS:
//
//	{port:NAME}      a DNS listener (server block key, e.g. example.com:{port:external}):
//	                 a free port, held for CoreDNS until its listeners are up, so
//	                 no other test or process can take it in between;
//	{httpport:NAME}  any other TCP listener (ready, health, prometheus): a port
//	                 that was free when chosen.
//
// The same NAME always stands for the same port, so a Corefile can name a
// listener twice (e.g. in a key and in a forward to it).
var placeholder = regexp.MustCompile(`\{(port|httpport):([A-Za-z0-9_.-]+)\}`)

// startMu serializes starts: caddy's start-up touches process-wide state.
var startMu sync.Mutex

// startCoreDNS starts CoreDNS in the test process from corefile, in which the
// listeners' ports are placeholders (see placeholder), and stops it when the
// test ends. The test fails at once if CoreDNS does not start. When it
// returns, every listener is bound: queries may be sent at once.
//
// Example:
//
//	c := startCoreDNS(t, `example.com:{port:internal} {
//		etcd { endpoint `+etcd.Endpoint()+` }
//	}`)
//	reply := exchange(t, "udp", c.Addr("internal"), query)
func startCoreDNS(t testing.TB, corefile string) *coreDNS {
	t.Helper()
	c, err := tryStartCoreDNS(t, corefile)
	if err != nil {
		t.Fatalf("CoreDNS did not start: %v\nCorefile:\n%s", err, corefile)
	}
	return c
}

// tryStartCoreDNS is startCoreDNS for a Corefile that CoreDNS may reject: it
// returns the start-up error (a plugin's setup error, say) instead of
// failing the test.
func tryStartCoreDNS(t testing.TB, corefile string) (*coreDNS, error) {
	t.Helper()
	held, ports, err := reservePorts(corefile)
	defer closeAll(held)
	if err != nil {
		return nil, err
	}
	corefile = placeholder.ReplaceAllStringFunc(corefile, func(p string) string {
		return strconv.Itoa(ports[placeholder.FindStringSubmatch(p)[2]])
	})

	startMu.Lock()
	caddy.Quiet = true
	dnsserver.Quiet = true
	inst, err := caddy.Start(corefileInput(corefile))
	startMu.Unlock()
	if err != nil {
		if inst != nil {
			stop(inst)
		}
		return nil, err
	}
	t.Cleanup(func() { stop(inst) })
	return &coreDNS{inst: inst, ports: ports}, nil
}

// Addr returns the address ("host:port") to query the listener named by the
// placeholder {port:name} (or {httpport:name}) on: the loopback address, or
// the address the server block binds to.
func (c *coreDNS) Addr(name string) string {
	port, ok := c.ports[name]
	if !ok {
		panic(fmt.Sprintf("the Corefile has no placeholder {port:%s}", name))
	}
	host := "127.0.0.1"
	for _, s := range c.inst.Servers() {
		if a, ok := s.LocalAddr().(*net.UDPAddr); ok && a.Port == port && !a.IP.IsUnspecified() {
			host = a.IP.String()
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// stop stops inst's servers and runs its plugins' shutdown hooks, as CoreDNS
// does when it exits.
func stop(inst *caddy.Instance) {
	inst.Stop()
	inst.ShutdownCallbacks()
}

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
			ports[name], err = freeTCPPort()
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
		port, err := freeTCPPort()
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

// freeTCPPort returns a TCP port the system considers free on every address.
func freeTCPPort() (int, error) {
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

// corefileInput is a Corefile held in a string: it implements caddy.Input.
type corefileInput string

// Body implements caddy.Input.
func (c corefileInput) Body() []byte { return []byte(c) }

// Path implements caddy.Input.
func (c corefileInput) Path() string { return "Corefile" }

// ServerType implements caddy.Input.
func (c corefileInput) ServerType() string { return "dns" }
