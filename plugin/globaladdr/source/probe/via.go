package probe

import (
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// Via is where the probes of an uplink leave the node from: a local address
// (a multi-homed node whose policy routing sends each source address out
// of its own uplink), an interface (bound to it, as a router running the
// server sends each probe out of its own WAN), or neither: the default
// route. Its zero value is the default route.
type Via struct {
	addr      netip.Addr
	iface     string
	givenText string // as the Corefile gives it
}

// ParseVia reads arg, an IP address or an interface's name.
func ParseVia(arg string) Via {
	if a, ok := ParseAddr(arg); ok {
		return Via{addr: a, givenText: arg}
	}
	return Via{iface: arg, givenText: arg}
}

// String names v as the Corefile gives it; "" for the default route.
func (v Via) String() string { return v.givenText }

// Local returns v's local address, if it is one.
func (v Via) Local() (netip.Addr, bool) { return v.addr, v.addr.IsValid() }

// Routed is implemented by the Probers and Checks whose packets can be
// sent through an uplink of the node's (https, stun, tcp): the source
// package gives each of an uplink's its Via before the server starts.
type Routed interface {
	RouteVia(v Via)
}

// dialer returns a dialer of network ("tcp" or "udp") whose connections
// leave from v.
func (v Via) dialer(network string) *net.Dialer {
	d := &net.Dialer{}
	switch {
	case v.addr.IsValid() && network == "udp":
		d.LocalAddr = &net.UDPAddr{IP: v.addr.AsSlice()}
	case v.addr.IsValid():
		d.LocalAddr = &net.TCPAddr{IP: v.addr.AsSlice()}
	case v.iface != "":
		name := v.iface
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var err error
			if cerr := c.Control(func(fd uintptr) { err = unix.BindToDevice(int(fd), name) }); cerr != nil {
				return cerr
			}
			return err
		}
	}
	return d
}
