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

// ListenAnnouncements joins 224.0.0.1:5350 and calls wake for each
// announcement of kind that comes from port 5351 of router, until ctx is
// done. Other messages are dropped. It fails at once when the group cannot
// be joined (no multicast on the pod's network, say): then only polling
// follows the router. Several listeners share the port.
func ListenAnnouncements(ctx context.Context, router netip.Addr, kind Kind, wake func()) error {
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
		if from.Addr().Unmap() == router && from.Port() == serverPort && isAnnouncement(kind, buf[:n]) {
			wake()
		}
	}
}

// isAnnouncement reports whether b is a well-formed announcement of kind.
func isAnnouncement(kind Kind, b []byte) bool {
	if kind == AnnounceNATPMP {
		_, err := ParseNATPMP(b)
		return err == nil || errors.Is(err, ErrNoUsableAddress)
	}
	_, err := ParsePCP(b)
	return errors.Is(err, errPCPAnnounce)
}
