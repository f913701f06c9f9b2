package netlab

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestLab sends a datagram from the test's namespace to a socket opened in
// a namespace of the lab, over a veth pair.
func TestLab(t *testing.T) {
	if !Enter(t) {
		return
	}
	lab := New(t)
	peer := lab.Namespace("peer")
	lab.Link(lab.Self(), "lab0", "192.0.2.1/24", peer, "lab1", "192.0.2.2/24")
	var conn *net.UDPConn
	if err := peer.Do(func() (err error) {
		conn, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(192, 0, 2, 2)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := out.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	n, from, err := conn.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "hello" || !from.IP.Equal(net.IPv4(192, 0, 2, 1)) {
		t.Fatalf("read %q from %v, %v; want hello from 192.0.2.1", buf[:n], from, err)
	}
	if got := peer.Run("ip", "-br", "addr", "show", "lab1"); !strings.Contains(got, "192.0.2.2/24") {
		t.Errorf("ip addr in the peer: %q", got)
	}
}
