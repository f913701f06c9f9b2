package test

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
	"strings"
	"testing"
)

// checkCertificate fails t unless certFile and keyFile hold a certificate
// and its key, the certificate for exactly names, valid for a server of
// each of them (a wildcard for a name below it), with the chain certFile
// gives after it verifying to root.
func checkCertificate(t *testing.T, certFile, keyFile string, root *x509.Certificate, names []string) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("the certificate and its key: %v", err)
	}
	leaf, intermediates := pair.Leaf, x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		intermediates.AddCert(c)
	}
	if got, want := slices.Sorted(slices.Values(leaf.DNSNames)), slices.Sorted(slices.Values(names)); !slices.Equal(got, want) {
		t.Errorf("the certificate's names are %v, want %v", got, want)
	}
	roots := x509.NewCertPool()
	roots.AddCert(root)
	for _, name := range names {
		host := strings.Replace(name, "*", "any", 1)
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("the certificate for %s does not verify to Pebble's root: %v", host, err)
		}
	}
}
