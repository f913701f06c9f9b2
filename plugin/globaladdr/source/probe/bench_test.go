package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/cpuclock"

	"github.com/pion/stun/v3"
)

// BenchmarkProbe asks a STUN responder and an HTTPS echo, both on loopback
// in this process, once per iteration, and reports the process's CPU time
// per probe and per hour at the default every (60 probes): the server's
// share included, so an upper bound of what a probe costs CoreDNS. The HTTPS
// probe opens a connection (and a TLS handshake) each time, as a probe a
// minute apart does: the client keeps no idle connection that long.
func BenchmarkProbe(b *testing.B) {
	mapped := netip.MustParseAddr("203.0.113.7")
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	go answerSTUN(conn, mapped)
	echo := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, mapped) }))
	defer echo.Close()
	client := newHTTPSClient(nil, Via{})
	client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: certPool(echo)}

	for _, p := range []Prober{&stunProber{server: conn.LocalAddr().String()}, &httpsProber{url: echo.URL + "/", client: client}} {
		b.Run(strings.Fields(p.(fmt.Stringer).String())[0], func(b *testing.B) {
			ctx := context.Background()
			before := cpuclock.Used(b)
			for b.Loop() {
				if addrs, err := p.Probe(ctx); err != nil || len(addrs) != 1 || addrs[0] != mapped {
					b.Fatalf("%v, %v", addrs, err)
				}
			}
			cpuclock.Report(b, before, 60)
		})
	}
}

// answerSTUN answers each Binding request on conn with mapped.
func answerSTUN(conn net.PacketConn, mapped netip.Addr) {
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return
		}
		m := &stun.Message{Raw: buf[:n]}
		if m.Decode() != nil {
			continue
		}
		resp := stun.MustBuild(stun.NewTransactionIDSetter(m.TransactionID), stun.BindingSuccess,
			&stun.XORMappedAddress{IP: mapped.AsSlice(), Port: 1}, stun.Fingerprint)
		conn.WriteTo(resp.Raw, from)
	}
}

// certPool holds the certificate of echo.
func certPool(echo *httptest.Server) *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(echo.Certificate())
	return pool
}
