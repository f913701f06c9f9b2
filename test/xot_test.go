package test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/internal/testpki"

	"github.com/miekg/dns"
)

// xotHost is the name the XoT listener's certificate carries, and the
// secondaries verify.
const xotHost = "primary.example.net"

// xotCerts are the files of a lab PKI for transfers over TLS: a CA and the
// primary's certificate it signed, for xotHost and 127.0.0.1.
type xotCerts struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool // the CA, for Go clients
}

// writeXoTCerts makes a CA and the primary's certificate in a temporary
// directory of t.
func writeXoTCerts(t *testing.T) xotCerts {
	t.Helper()
	ca := testpki.NewCA(t, "globaladdr test CA")
	primary := ca.IssueHost(t, xotHost, net.IPv4(127, 0, 0, 1))
	return xotCerts{caFile: ca.CertFile, certFile: primary.CertFile, keyFile: primary.KeyFile, pool: ca.Pool()}
}

// xotPrimaryCorefile is hiddenPrimaryCorefile with a tls:// listener beside
// the plain one (CERT and KEY the certificate's files), as
// xot-primary.Corefile has it.
var xotPrimaryCorefile = strings.Replace(hiddenPrimaryCorefile,
	"example.com:{port:primary} {\n",
	"example.com:{port:primary} tls://example.com:{port:xot} {\n\ttls CERT KEY\n", 1)

// startXoTPrimary starts the hidden primary of startHiddenPrimary with a
// listener for transfers over TLS with the certificate of certs, and its
// etcd.
func startXoTPrimary(t *testing.T, certs xotCerts, to ...string) (*coreDNS, *etcdtest.Server) {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app.example.com", "192.168.0.51"), a("www.example.com", "198.51.100.80"))
	putGlobal(t, etcd, "203.0.113.10")
	return startCoreDNS(t, strings.NewReplacer(
		"ETCD", etcd.Endpoint(),
		"TO", strings.Join(to, " "),
		"KEY SECRET", nameserver.TestKey.Name+" "+nameserver.TestKey.Secret,
		"CERT KEY", certs.certFile+" "+certs.keyFile,
	).Replace(xotPrimaryCorefile)), etcd
}

// TestXoTSecondaries runs BIND 9 and NSD as secondaries that transfer the
// hidden primary's zone over TLS (RFC 9103) with TSIG, verifying its
// certificate against the lab CA, notified over UDP: both serve the zone
// and follow a change. Neither a plain TCP transfer on the TLS port nor one
// over TLS without TSIG gets the zone. Go's and dig's XoT clients
// negotiate ALPN "dot".
func TestXoTSecondaries(t *testing.T) {
	certs := writeXoTCerts(t)
	bindAddr, nsdAddr := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	primary, etcd := startXoTPrimary(t, certs, bindAddr, nsdAddr)
	tlsAddr := primary.Addr("xot")
	ref := nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey,
		TLS: &nameserver.XoT{Addr: tlsAddr, CAFile: certs.caFile, Hostname: xotHost}}

	checkALPN(t, tlsAddr, certs)
	if rrs, err := nameserver.TryAXFR(tlsAddr, "example.com.", &nameserver.TestKey); err == nil {
		t.Errorf("a plain TCP AXFR from the TLS port got %d records", len(rrs))
	}
	if rrs, err := xotAXFR(tlsAddr, certs, &nameserver.TestKey); err != nil || len(rrs) < 4 {
		t.Errorf("AXFR over TLS: %d records, %v", len(rrs), err)
	}
	if rrs, err := xotAXFR(tlsAddr, certs, nil); err == nil {
		t.Errorf("an AXFR over TLS without TSIG got %d records", len(rrs))
	}
	digXoT(t, tlsAddr, certs)

	secondaries := []*nameserver.Server{nameserver.StartBIND(t, bindAddr, ref), nameserver.StartNSD(t, nsdAddr, ref)}
	for _, s := range secondaries {
		eventually(t, 10*time.Second, s.Name+": transfer over TLS", func() error {
			return answers(s.Addr, "app.example.com.", dns.TypeA, []string{"203.0.113.10"})
		})
	}
	putGlobal(t, etcd, "203.0.113.20")
	for _, s := range secondaries {
		eventually(t, 10*time.Second, s.Name+": the change, after a NOTIFY", func() error {
			return answers(s.Addr, "app.example.com.", dns.TypeA, []string{"203.0.113.20"})
		})
	}
}

// TestXoTUntrusted runs BIND 9 and NSD as secondaries that trust another CA
// than the one that signed the primary's certificate, or expect another
// name: they refuse the connection and hold no zone.
func TestXoTUntrusted(t *testing.T) {
	certs, other := writeXoTCerts(t), writeXoTCerts(t)
	addrs := []string{nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)}
	primary, _ := startXoTPrimary(t, certs, addrs...)
	xot := func(ca, host string) nameserver.Primary {
		return nameserver.Primary{Zone: "example.com.", Addr: primary.Addr("primary"), Key: nameserver.TestKey,
			TLS: &nameserver.XoT{Addr: primary.Addr("xot"), CAFile: ca, Hostname: host}}
	}
	for _, tc := range []struct {
		s    *nameserver.Server
		want string // what its log says when it refuses the certificate
	}{
		{nameserver.StartBIND(t, addrs[0], xot(other.caFile, xotHost)), "TLS peer certificate verification failed"},
		{nameserver.StartNSD(t, addrs[1], xot(other.caFile, xotHost)), "certificate verify failed"},
		{nameserver.StartBIND(t, addrs[2], xot(certs.caFile, "other.example.net")), "TLS peer certificate verification failed"},
	} {
		eventually(t, 20*time.Second, tc.s.Name+" refuses the certificate", func() error {
			if out := tc.s.Output(); !strings.Contains(out, tc.want) {
				return fmt.Errorf("its log lacks %q:\n%s", tc.want, out)
			}
			return nil
		})
		if r := query(t, "udp", tc.s.Addr, "app.example.com.", dns.TypeA); len(r.Answer) > 0 {
			t.Errorf("%s serves the zone of a primary it does not trust:\n%v", tc.s.Name, r)
		}
	}
}

// checkALPN fails t unless the TLS listener at addr negotiates ALPN "dot"
// with a client that offers it, and accepts one that offers none.
func checkALPN(t *testing.T, addr string, certs xotCerts) {
	t.Helper()
	for _, protos := range [][]string{{"dot"}, nil} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: certs.pool, ServerName: xotHost, NextProtos: protos})
		if err != nil {
			t.Fatalf("TLS with ALPN %v: %v", protos, err)
		}
		if got, want := conn.ConnectionState().NegotiatedProtocol, strings.Join(protos, ""); got != want {
			t.Errorf("ALPN %v: negotiated %q, want %q", protos, got, want)
		}
		conn.Close()
	}
}

// xotAXFR transfers example.com over TLS from addr, signed with key
// unless it is nil, verifying the certificate with certs' CA and offering
// ALPN "dot".
func xotAXFR(addr string, certs xotCerts, key *nameserver.Key) ([]dns.RR, error) {
	return nameserver.TryXoT(addr, "example.com.", key, &tls.Config{RootCAs: certs.pool, ServerName: xotHost, NextProtos: []string{"dot"}})
}

// digXoT transfers example.com over TLS from addr with BIND's dig, which
// insists on ALPN "dot", verifying the certificate, and fails t unless the
// transfer holds the zone.
func digXoT(t *testing.T, addr string, certs xotCerts) {
	t.Helper()
	dig := prereq.Program(t, "dig", "bind9-dnsutils")
	host, port, _ := net.SplitHostPort(addr)
	key := "hmac-sha256:" + strings.TrimSuffix(nameserver.TestKey.Name, ".") + ":" + nameserver.TestKey.Secret
	out, err := exec.Command(dig, "+tls", "+tls-ca="+certs.caFile, "+tls-hostname="+xotHost,
		"-p", port, "-y", key, "@"+host, "example.com.", "AXFR").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "app.example.com.") || strings.Contains(string(out), "failed") {
		t.Errorf("dig +tls AXFR: %v\n%s", err, out)
	}
}

// checkXoTPrimary returns the check of xot-primary.Corefile, whose TLS
// listener is xot with the certificate of certs: the primary answers as an
// external view, refuses a plain TCP AXFR on its TLS port, and a BIND
// secondary on a free address (the examples' SECONDARY is
// hidden-primary.Corefile's; this one shares its IP address, which the
// transfer plugin allows) transfers the zone over TLS, verifying the
// certificate, and serves the global address.
func checkXoTPrimary(xot string, certs xotCerts) func(t *testing.T, addr string) {
	return func(t *testing.T, addr string) {
		checkExternal(t, addr)
		zone := dns.Fqdn(exampleDomain)
		if rrs, err := nameserver.TryAXFR(xot, zone, &nameserver.TestKey); err == nil {
			t.Errorf("a plain TCP AXFR from the TLS port got %d records", len(rrs))
		}
		bind := nameserver.StartBIND(t, nameserver.FreeLoopbackAddr(t), nameserver.Primary{Zone: zone, Addr: addr, Key: nameserver.TestKey,
			TLS: &nameserver.XoT{Addr: xot, CAFile: certs.caFile, Hostname: xotHost}})
		eventually(t, 10*time.Second, "BIND's first transfer over TLS", func() error {
			return answers(bind.Addr, "app."+zone, dns.TypeA, []string{exampleGlobal})
		})
	}
}
