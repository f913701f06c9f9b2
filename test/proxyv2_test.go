package test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// proxyV2Signature opens every PROXY protocol version 2 header.
const proxyV2Signature = "\r\n\r\n\x00\r\nQUIT\n"

// proxyV2Header returns the PROXY protocol version 2 header a load balancer
// puts before what it relays from client to server over network ("udp" or
// "tcp"): the PROXY command, the address family of client, the transport,
// then both addresses and ports. It is written from the protocol's
// specification (haproxy's proxy-protocol.txt, section 2.2), apart from the
// code that reads it.
func proxyV2Header(network string, client, server netip.AddrPort) []byte {
	family := byte(0x10) // AF_INET
	if client.Addr().Is6() {
		family = 0x20 // AF_INET6
	}
	transport := byte(0x1) // STREAM
	if network == "udp" {
		transport = 0x2 // DGRAM
	}
	var addrs []byte
	addrs = append(addrs, client.Addr().AsSlice()...)
	addrs = append(addrs, server.Addr().AsSlice()...)
	addrs = binary.BigEndian.AppendUint16(addrs, client.Port())
	addrs = binary.BigEndian.AppendUint16(addrs, server.Port())

	h := []byte(proxyV2Signature)
	h = append(h, 0x21, family|transport) // version 2, PROXY; family, transport
	h = binary.BigEndian.AppendUint16(h, uint16(len(addrs)))
	return append(h, addrs...)
}

// exchangeProxied sends m to addr over network from the local address peer,
// as a load balancer at peer relays a query of client: preceded by a PROXY
// protocol v2 header naming client (in the same datagram over UDP, at the
// start of the connection over TCP). It returns the reply, which comes back
// to peer. The test fails at once when no reply comes.
func exchangeProxied(t testing.TB, network string, peer netip.Addr, client netip.AddrPort, addr string, m *dns.Msg) *dns.Msg {
	t.Helper()
	server := netip.MustParseAddrPort(addr)
	if client.Addr().Is4() != server.Addr().Is4() {
		// One family for both addresses of a header: the server's own
		// address in the client's family.
		server = netip.AddrPortFrom(loopback(client.Addr()), server.Port())
	}
	header := proxyV2Header(network, client, server)
	local := netip.AddrPortFrom(peer, 0)
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(local)}
	if network == "udp" {
		d.LocalAddr = net.UDPAddrFromAddrPort(local)
	}
	conn, err := d.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	co := &dns.Conn{Conn: conn}
	if network == "udp" {
		query, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Write(append(header, query...))
		if err != nil {
			t.Fatal(err)
		}
	} else {
		if _, err := conn.Write(header); err != nil {
			t.Fatal(err)
		}
		if err := co.WriteMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	r, err := co.ReadMsg()
	if err != nil {
		t.Fatalf("%s query %s from %v relayed by %v to %s: %v", network, m.Question[0].Name, client, peer, addr, err)
	}
	return r
}

// loopback returns the loopback address of a's family: 127.0.0.1 or ::1.
func loopback(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return netip.IPv6Loopback()
}
