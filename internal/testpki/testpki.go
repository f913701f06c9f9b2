// Package testpki makes the certificates of a test: a CA of its own, and
// certificates it signs for servers and clients, as files in the test's
// temporary directory.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority of a test.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	// CertFile is the CA's certificate, PEM, for a trusted CA file.
	CertFile string
}

// NewCA makes a CA named name, whose files go into t's temporary directory.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	ca := &CA{dir: t.TempDir()}
	var der []byte
	ca.cert, ca.key, der = ca.certify(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
	ca.CertFile = ca.write(t, name+"-ca.crt", "CERTIFICATE", der)
	return ca
}

// Pair is a certificate and its key, as files.
type Pair struct{ CertFile, KeyFile string }

// Issue makes a certificate for name (its common name, the user of a client
// certificate), valid for ips as a server and as a client.
func (ca *CA) Issue(t testing.TB, name string, ips ...net.IP) Pair {
	t.Helper()
	return ca.issue(t, name, []string{"localhost"}, ips)
}

// IssueHost makes a server certificate for the host name host (its common
// name and its DNS name) and ips.
func (ca *CA) IssueHost(t testing.TB, host string, ips ...net.IP) Pair {
	t.Helper()
	return ca.issue(t, host, []string{host}, ips)
}

// issue makes a certificate for name, dnsNames and ips, for servers and
// clients, and writes it and its key into files named after name.
func (ca *CA) issue(t testing.TB, name string, dnsNames []string, ips []net.IP) Pair {
	t.Helper()
	_, key, der := ca.certify(t, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: ips,
		DNSNames:    dnsNames,
	})
	k, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return Pair{
		CertFile: ca.write(t, name+".crt", "CERTIFICATE", der),
		KeyFile:  ca.write(t, name+".key", "EC PRIVATE KEY", k),
	}
}

// certify makes a key and a certificate of it from tmpl, valid for a day,
// signed by ca (by itself while ca has no certificate yet).
func (ca *CA) certify(t testing.TB, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial(t)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	parent, signer := ca.cert, ca.key
	if parent == nil {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, der
}

// write writes a PEM block into the CA's directory and returns its path.
func (ca *CA) write(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serial returns a random certificate serial number.
func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Pool returns a pool holding the CA's certificate.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}
