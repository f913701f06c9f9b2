// Package routerlab is a home network in network namespaces, for the tests
// of the sources that ask the router for its WAN address: the test's own
// namespace is the LAN (10.77.0.2/24, default route through the router), a
// router namespace runs Debian's miniupnpd (UPnP IGD, NAT-PMP and PCP on
// its LAN side, 10.77.0.1) and masquerades with nftables to a WAN namespace
// (11.22.33.1/24), whose addresses exist only inside the lab. The router's
// WAN address is an ordinary global one, since miniupnpd 2.3.1 reports no
// reserved address; Play puts a responder of the test's own in miniupnpd's
// place, to report any address, carrier-grade NAT's say.
package routerlab

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// The lab's addresses.
var (
	// RouterLAN is the router's address on the LAN: the gateway.
	RouterLAN = netip.MustParseAddr("10.77.0.1")
	// Host is the test's address on the LAN.
	Host = netip.MustParseAddr("10.77.0.2")
	// Upstream is the WAN namespace's address, the router's next hop.
	Upstream = netip.MustParseAddr("11.22.33.1")
	// FirstWAN is the router's WAN address at the start.
	FirstWAN = netip.MustParseAddr("11.22.33.2")
)

// The router's interfaces, which Firewall and MiniupnpdConf name.
const (
	LANDev = "rlan0" // the router's LAN interface
	WANDev = "rwan0" // the router's WAN interface
)

// Lab is the LAN, router and WAN namespaces, with miniupnpd.
type Lab struct {
	*netlab.Lab
	// Router and WAN are the router's and the uplink's namespaces; the
	// LAN is the test's own (Self).
	Router, WAN *netlab.NS

	t    testing.TB
	conf string // miniupnpd's configuration file

	mu     sync.Mutex
	wan    netip.Addr // the router's WAN address
	cmd    *exec.Cmd  // miniupnpd, nil while stopped
	exited chan struct{}
	out    lockedbuf.Buffer // miniupnpd's output, of every run
	port   int              // miniupnpd's HTTP port
}

// New builds the lab and starts miniupnpd; call it in the namespace
// netlab.Enter made. It needs miniupnpd and nft (Debian's
// miniupnpd-nftables and nftables): without them the test skips, and fails
// under CI=true.
func New(t testing.TB) *Lab {
	prereq.Program(t, "miniupnpd", "miniupnpd-nftables")
	prereq.Program(t, "nft", "nftables")
	nl := netlab.New(t)
	l := &Lab{Lab: nl, Router: nl.Namespace("router"), WAN: nl.Namespace("wan"), t: t, wan: FirstWAN}
	nl.Link(nl.Self(), "lan0", Host.String()+"/24", l.Router, LANDev, RouterLAN.String()+"/24")
	nl.Link(l.Router, WANDev, FirstWAN.String()+"/24", l.WAN, "wan0", Upstream.String()+"/24")
	nl.Self().IP("route", "add", "default", "via", RouterLAN.String())
	l.Router.IP("route", "add", "default", "via", Upstream.String(), "dev", WANDev, "onlink")
	l.Router.Run("sysctl", "-qw", "net.ipv4.ip_forward=1")
	dir := t.TempDir()
	rules := filepath.Join(dir, "router.nft")
	write(t, rules, Firewall)
	l.Router.Run("nft", "-f", rules)
	// An HTTP port of the system's choice, kept across restarts so that
	// the device description's URL stays.
	var port int
	if err := l.Router.Do(func() error {
		ln, err := net.Listen("tcp4", RouterLAN.String()+":0")
		if err != nil {
			return err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		return ln.Close()
	}); err != nil {
		t.Fatalf("a port for miniupnpd: %v", err)
	}
	l.conf = filepath.Join(dir, "miniupnpd.conf")
	write(t, l.conf, MiniupnpdConf(netip.PrefixFrom(RouterLAN, 24).Masked().String(), port))
	l.Start()
	t.Cleanup(l.Stop)
	return l
}

// Firewall is the router's firewall (nft -f): LAN to WAN forwarded and
// masqueraded, and the chains miniupnpd adds its mappings to.
const Firewall = `table inet filter {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		iifname "` + LANDev + `" oifname "` + WANDev + `" accept
		jump miniupnpd
	}
	chain miniupnpd {
	}
	chain prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump prerouting_miniupnpd
	}
	chain postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump postrouting_miniupnpd
		oifname "` + WANDev + `" masquerade
	}
	chain prerouting_miniupnpd {
	}
	chain postrouting_miniupnpd {
	}
}
`

// MiniupnpdConf returns miniupnpd's configuration for a router whose LAN is
// the prefix lan (10.77.0.0/24), serving HTTP on port: the lab's interfaces and chains, UPnP IGD,
// NAT-PMP and PCP (enable_natpmp enables both), and the ordinary rules of a
// home router: ports 1024-65535 of the LAN.
func MiniupnpdConf(lan string, port int) string {
	return "port=" + strconv.Itoa(port) + "\n" + fmt.Sprintf(miniupnpdConf, lan)
}

// miniupnpdConf is MiniupnpdConf's text, the LAN's prefix left to fill in.
const miniupnpdConf = `ext_ifname=` + WANDev + `
listening_ip=` + LANDev + `
enable_upnp=yes
enable_natpmp=yes
secure_mode=yes
system_uptime=no
uuid=3e2f7a9c-1b4d-4f6e-9a8b-0c1d2e3f4a5b
upnp_table_name=filter
upnp_nat_table_name=filter
upnp_forward_chain=miniupnpd
upnp_nat_chain=prerouting_miniupnpd
upnp_nat_postrouting_chain=postrouting_miniupnpd
allow 1024-65535 %s 1024-65535
deny 0-65535 0.0.0.0/0 0-65535
`

// Ready is what miniupnpd writes once it serves NAT-PMP and PCP.
const Ready = "Listening for NAT-PMP/PCP traffic on port 5351"

// ready finds Ready in miniupnpd's output; httpPort finds its HTTP port.
var (
	ready    = regexp.MustCompile(regexp.QuoteMeta(Ready))
	httpPort = regexp.MustCompile(`HTTP listening on port (\d+)`)
)

// Start starts miniupnpd in the router namespace, and waits until it
// serves.
func (l *Lab) Start() {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cmd != nil {
		return
	}
	out := &l.out
	start := len(out.String())
	cmd := l.Router.Command("miniupnpd", "-d", "-f", l.conf, "-P", filepath.Join(filepath.Dir(l.conf), "miniupnpd.pid"))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("starting miniupnpd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for deadline := time.Now().Add(10 * time.Second); !ready.MatchString(out.String()[start:]); {
		select {
		case <-exited:
			l.t.Fatalf("miniupnpd exited:\n%s", out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			l.t.Fatalf("miniupnpd did not start in 10s:\n%s", out)
		}
	}
	m := httpPort.FindStringSubmatch(out.String()[start:])
	if m == nil {
		cmd.Process.Kill()
		l.t.Fatalf("miniupnpd names no HTTP port:\n%s", out)
	}
	l.port, _ = strconv.Atoi(m[1])
	l.cmd, l.exited = cmd, exited
}

// Stop stops miniupnpd (SIGTERM, as a router's shutdown), and waits until it
// has exited: the router goes away.
func (l *Lab) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cmd == nil {
		return
	}
	l.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-l.exited:
	case <-time.After(5 * time.Second):
		l.cmd.Process.Kill()
		<-l.exited
	}
	l.cmd = nil
}

// Output is what miniupnpd wrote, in all its runs.
func (l *Lab) Output() string { return l.out.String() }

// DescURL is the URL of miniupnpd's device description.
func (l *Lab) DescURL() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return "http://" + RouterLAN.String() + ":" + strconv.Itoa(l.port) + "/rootDesc.xml"
}

// WANAddr is the router's WAN address.
func (l *Lab) WANAddr() netip.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wan
}

// SetWAN changes the router's WAN address to a, as an ISP's new lease
// does: the old address is removed and the new one added; miniupnpd hears
// of it (netlink) and announces it. (Added first, the new address could be
// announced while the old one was still primary: the announcement would
// name the old one.) It returns when the change began.
func (l *Lab) SetWAN(a netip.Addr) (changed time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	changed = time.Now()
	l.Router.IP("addr", "del", l.wan.String()+"/24", "dev", WANDev)
	l.Router.IP("addr", "add", a.String()+"/24", "dev", WANDev)
	l.Router.IP("route", "replace", "default", "via", Upstream.String(), "dev", WANDev, "onlink")
	l.wan = a
	return changed
}

func write(t testing.TB, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
