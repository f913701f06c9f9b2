package router

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

const (
	// serverPort is the port NAT-PMP and PCP servers listen on.
	serverPort = 5351
	// firstWait is how long a request waits for its answer before it is
	// sent again, doubling at each try (RFC 6886 section 3.1).
	firstWait = 250 * time.Millisecond
	// maxMessage is the largest message read: PCP's maximum, 1100 bytes,
	// and one more byte to tell a longer one.
	maxMessage = 1101
)

// errNotOurs is what an answer's parser returns for a message that answers
// another request (a stale one, another nonce): it is dropped, and the
// exchange goes on waiting.
var errNotOurs = errors.New("not an answer to this request")

// exchange sends req on conn, which is connected to the server, again
// and again with a doubling wait, until parse accepts an answer or rejects
// one, or ctx is done. parse is given each message that comes from the
// server; it returns errNotOurs for one to drop.
func exchange(ctx context.Context, conn *net.UDPConn, req []byte, parse func([]byte) error) error {
	buf := make([]byte, maxMessage)
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	for wait := firstWait; ; wait *= 2 {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer from %s: %w", conn.RemoteAddr(), ctx.Err())
		}
		if _, err := conn.Write(req); err != nil {
			return err
		}
		deadline := time.Now().Add(wait)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		conn.SetReadDeadline(deadline)
		for {
			n, err := conn.Read(buf)
			if ctx.Err() != nil {
				return fmt.Errorf("no answer from %s: %w", conn.RemoteAddr(), ctx.Err())
			}
			var timeout net.Error
			if errors.As(err, &timeout) && timeout.Timeout() {
				break
			}
			if err != nil {
				// A refused port (ICMP) comes back as an error: no server.
				return fmt.Errorf("no answer from %s: %w", conn.RemoteAddr(), err)
			}
			if err := parse(buf[:n]); !errors.Is(err, errNotOurs) {
				return err
			}
		}
	}
}

// dial opens a UDP socket connected to port 5351 of server, so that only
// its messages are read.
func dial(server netip.Addr) (*net.UDPConn, error) {
	return net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(server, serverPort)))
}
