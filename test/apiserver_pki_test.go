package test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/globaladdr/globaladdr/internal/testpki"
)

// apiServerSecrets are the files kube-apiserver starts with, made for one
// test in its temporary directory, and what its clients need of them.
type apiServerSecrets struct {
	certFile, keyFile string // the serving certificate for 127.0.0.1, and its key
	caPEM             []byte // the certificate of its CA, which the clients trust
	saKeyFile         string // the key that signs service account tokens
	saPubFile         string // its public key, which verifies them
	tokenFile         string // the static token file
	token             string // an administrator's token in it (group system:masters)
	userToken         string // the token of the user "user" in it: no group, no role bound
}

// writeAPIServerSecrets generates kube-apiserver's keys, its serving
// certificate and a token in dir.
func writeAPIServerSecrets(t *testing.T, dir string) apiServerSecrets {
	t.Helper()
	s := apiServerSecrets{
		saKeyFile: filepath.Join(dir, "sa.key"),
		saPubFile: filepath.Join(dir, "sa.pub"),
		tokenFile: filepath.Join(dir, "tokens.csv"),
	}
	ca := testpki.NewCA(t, "kube-apiserver CA")
	serving := ca.Issue(t, "kube-apiserver", net.IPv4(127, 0, 0, 1))
	s.certFile, s.keyFile = serving.CertFile, serving.KeyFile
	var err error
	if s.caPEM, err = os.ReadFile(ca.CertFile); err != nil {
		t.Fatal(err)
	}

	saKey := newKey(t)
	writePEM(t, s.saKeyFile, "EC PRIVATE KEY", marshalKey(t, saKey))
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, s.saPubFile, "PUBLIC KEY", pub)

	s.token, s.userToken = newToken(), newToken()
	// token,user,uid,"groups"
	writeSecret(t, s.tokenFile, []byte(s.token+`,admin,admin,"system:masters"`+"\n"+s.userToken+",user,user\n"))
	return s
}

// newToken returns a random bearer token.
func newToken() string {
	token := make([]byte, 16)
	rand.Read(token)
	return hex.EncodeToString(token)
}

// newKey returns a new ECDSA P-256 key.
func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// marshalKey returns key in SEC 1 form, for an "EC PRIVATE KEY" block.
func marshalKey(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// writePEM writes der as one PEM block of type typ into the file name,
// with writeSecret.
func writePEM(t *testing.T, name, typ string, der []byte) {
	t.Helper()
	writeSecret(t, name, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

// writeSecret writes data into the file name, readable by its owner only.
func writeSecret(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
