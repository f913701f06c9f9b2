package router

import (
	"context"
	"errors"
	"net"
	"net/netip"
)

// announceGroup is where routers multicast their NAT-PMP and PCP
// announcements (RFC 6886 section 3.2.1, RFC 6887 section 14.1.3).
var announceGroup = netip.MustParseAddrPort("224.0.0.1:5350")

// Kind is the protocol of the announcements to hear.
type Kind int

const (
	// AnnounceNATPMP hears NAT-PMP's announcements of a new address.
	AnnounceNATPMP Kind = iota
	// AnnouncePCP hears PCP's ANNOUNCE, sent when the server's state or
	// address may have changed.
	AnnouncePCP
)

// ListenAnnouncements joins 224.0.0.1:5350 and calls heard for each
// announcement of kind that comes from port 5351 of router, until ctx is
// done: with the address a NAT-PMP announcement carries, and with the
// invalid Addr for a PCP ANNOUNCE (which carries none) and for a NAT-PMP
// announcement of no usable address. Other messages are dropped. It fails at once when the group cannot
// be joined (no multicast on the pod's network, say): then only polling
// follows the router. Several listeners share the port.
func ListenAnnouncements(ctx context.Context, router netip.Addr, kind Kind, heard func(netip.Addr)) error {
	conn, err := net.ListenMulticastUDP("udp4", nil, net.UDPAddrFromAddrPort(announceGroup))
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	buf := make([]byte, maxMessage)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if from.Addr().Unmap() != router || from.Port() != serverPort {
			continue
		}
		if a, ok := announced(kind, buf[:n]); ok {
			heard(a)
		}
	}
}

// announced reads b as an announcement of kind: ok when it is a
// well-formed one, with the address it carries, if any.
func announced(kind Kind, b []byte) (addr netip.Addr, ok bool) {
	if kind == AnnounceNATPMP {
		a, err := ParseNATPMP(b)
		return a, err == nil || errors.Is(err, ErrNoUsableAddress)
	}
	_, err := ParsePCP(b)
	return netip.Addr{}, errors.Is(err, errPCPAnnounce)
}
