// Package corednstest runs the globaladdr build of CoreDNS (every plugin of
// plugin.cfg, in its order) inside a test process, from a Corefile string
// whose listeners' ports are named placeholders bound to free ports, for the
// end-to-end tests in test/ and the conformance tests in test/externaldns/.
// It reaches the plugins only through the Corefile, as the binary does.
package corednstest

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"

	// The globaladdr build: every plugin of plugin.cfg, in plugin.cfg's order.
	_ "github.com/globaladdr/globaladdr/core"
)

// Server is a CoreDNS instance running inside the test process, started by
// Start.
type Server struct {
	inst *caddy.Instance
	// ports maps each placeholder name of the Corefile to its port.
	ports map[string]int
}

// Port placeholders of a Corefile given to Start:
//
//	{port:NAME}      a DNS listener (server block key, e.g. example.com:{port:external}):
//	                 a free port, held for CoreDNS until its listeners are up, so
//	                 no other test or process can take it in between;
//	{httpport:NAME}  any other TCP listener (ready, health, prometheus): a port
//	                 that was free when chosen.
//
// No port is chosen twice in a process (see FreeTCPPort).
//
// The same NAME always stands for the same port, so a Corefile can name a
// listener twice (e.g. in a key and in a forward to it).
var placeholder = regexp.MustCompile(`\{(port|httpport):([A-Za-z0-9_.-]+)\}`)

// startMu serializes starts and reloads: caddy's start-up touches
// process-wide state.
var startMu sync.Mutex

// errNoCorefile is what caddy.LoadCaddyfile returns in a test process.
var errNoCorefile = errors.New("corednstest: a test's Corefile is a string, not a file: reload it with Server.Reload")

// The reload plugin checks every 30 seconds whether the Corefile that
// caddy.LoadCaddyfile returns has changed, and restarts the instance with it
// if so. In a test process there is no Corefile file, and caddy then
// returns CoreDNS's default one, `.:53 { whoami }`: a test that ran a
// Corefile with reload for longer would find its listeners gone and a
// whoami on port 53 of every address. This loader makes caddy.LoadCaddyfile
// fail instead, and the reload plugin then keeps the running Corefile.
func init() {
	caddy.RegisterCaddyfileLoader("corednstest", caddy.LoaderFunc(func(string) (caddy.Input, error) {
		return nil, errNoCorefile
	}))
}

// Start starts CoreDNS in the test process from corefile, in which the
// listeners' ports are placeholders (see placeholder), and stops it when the
// test ends. The test fails at once if CoreDNS does not start. When it
// returns, every listener is bound: queries may be sent at once.
//
// Example:
//
//	c := corednstest.Start(t, `example.com:{port:internal} {
//		etcd { endpoint `+etcd.Endpoint()+` }
//	}`)
//	reply, err := dns.Exchange(query, c.Addr("internal"))
func Start(t testing.TB, corefile string) *Server {
	t.Helper()
	c, err := TryStart(t, corefile)
	if err != nil {
		t.Fatalf("CoreDNS did not start: %v\nCorefile:\n%s", err, corefile)
	}
	return c
}

// TryStart is Start for a Corefile that CoreDNS may reject: it returns the
// start-up error (a plugin's setup error, say) instead of failing the test.
func TryStart(t testing.TB, corefile string) (*Server, error) {
	t.Helper()
	held, ports, err := reservePorts(corefile)
	defer closeAll(held)
	if err != nil {
		return nil, err
	}
	c := &Server{ports: ports}

	startMu.Lock()
	caddy.Quiet = true
	dnsserver.Quiet = true
	inst, err := caddy.Start(c.input(corefile))
	startMu.Unlock()
	if err != nil {
		if inst != nil {
			stop(inst)
		}
		return nil, err
	}
	c.inst = inst
	t.Cleanup(c.Stop)
	return c, nil
}

// Addr returns the address ("host:port") to query the listener named by the
// placeholder {port:name} (or {httpport:name}) on: the loopback address, or
// the address the server block binds to.
func (c *Server) Addr(name string) string {
	port := c.Port(name)
	host := "127.0.0.1"
	for _, s := range c.inst.Servers() {
		if a, ok := s.LocalAddr().(*net.UDPAddr); ok && a.Port == port && !a.IP.IsUnspecified() {
			host = a.IP.String()
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// Port returns the port that the placeholder {port:name} (or
// {httpport:name}) stands for.
func (c *Server) Port(name string) int {
	port, ok := c.ports[name]
	if !ok {
		panic(fmt.Sprintf("the Corefile has no placeholder {port:%s}", name))
	}
	return port
}

// Reload replaces c's Corefile by corefile, whose placeholders name c's
// listeners, as the reload plugin does. The test fails at once if the new
// Corefile does not start.
func (c *Server) Reload(t testing.TB, corefile string) {
	t.Helper()
	if err := c.TryReload(corefile); err != nil {
		t.Fatalf("reload: %v", err)
	}
}

// TryReload is Reload for a Corefile that CoreDNS may reject: it returns
// the error, and c goes on serving its Corefile as it was.
func (c *Server) TryReload(corefile string) error {
	startMu.Lock()
	inst, err := c.inst.Restart(c.input(corefile))
	startMu.Unlock()
	if err != nil {
		return err
	}
	c.inst = inst
	return nil
}

// Stop stops c's servers and runs its plugins' shutdown hooks, as CoreDNS
// does when it exits. Start has it run when the test ends; stopping twice
// does nothing more.
func (c *Server) Stop() { stop(c.inst) }

// input returns corefile with its placeholders replaced by c's ports.
func (c *Server) input(corefile string) caddy.Input {
	return corefileInput(placeholder.ReplaceAllStringFunc(corefile, func(p string) string {
		return strconv.Itoa(c.ports[placeholder.FindStringSubmatch(p)[2]])
	}))
}

// stop stops inst's servers and runs its plugins' shutdown hooks.
func stop(inst *caddy.Instance) {
	// Stopping removes inst from caddy's instances, which the check of the
	// Corefiles being started reads (etcdclient's CheckCorefile).
	startMu.Lock()
	inst.Stop()
	startMu.Unlock()
	inst.ShutdownCallbacks()
}

// corefileInput is a Corefile held in a string: it implements caddy.Input.
type corefileInput string

// Body implements caddy.Input.
func (c corefileInput) Body() []byte { return []byte(c) }

// Path implements caddy.Input.
func (c corefileInput) Path() string { return "Corefile" }

// ServerType implements caddy.Input.
func (c corefileInput) ServerType() string { return "dns" }
