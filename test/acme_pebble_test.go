package test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// acmeFiles are what `make acme-bins` puts into bin/acme/ for the tests,
// as test/acme/go.mod pins them: Pebble, acmeclient, and Pebble's test
// certificates (its HTTPS certificate, its key and their root).
var acmeFiles = []string{"pebble", "acmeclient", "certs/localhost/cert.pem", "certs/localhost/key.pem", "certs/pebble.minica.pem"}

// acmeDir returns the directory of acmeFiles, or ends t through
// prereq.Missing unless all of them are there.
func acmeDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "bin", "acme")
	for _, name := range acmeFiles {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			prereq.Missing(t, "bin/acme/%s is not built: run make acme-bins (%v)", name, err)
		}
	}
	return dir
}

// pebble is a Pebble ACME CA run by startPebble.
type pebble struct {
	directory string // the ACME directory's URL
	caFile    string // the root of Pebble's HTTPS certificate (pebble.minica.pem)
	mgmt      string // the management interface's URL
}

// startPebble starts Pebble on free loopback ports, validating DNS-01
// challenges by asking dnsserver (host:port), at full speed and
// deterministically: no sleep before a validation, no nonce rejected, no
// authorization reused. Its HTTPS certificate is the one its module ships.
// It stops when t ends, and prints its output if t failed.
func startPebble(t *testing.T, dnsserver string) *pebble {
	t.Helper()
	bins := acmeDir(t)
	p := &pebble{caFile: filepath.Join(bins, "certs/pebble.minica.pem")}
	listen, mgmt := nameserver.FreeLoopbackAddr(t), nameserver.FreeLoopbackAddr(t)
	p.directory, p.mgmt = "https://"+listen+"/dir", "https://"+mgmt
	dir := t.TempDir()
	config := filepath.Join(dir, "pebble.json")
	writePebbleConfig(t, config, listen, mgmt, filepath.Join(bins, "certs/localhost/cert.pem"), filepath.Join(bins, "certs/localhost/key.pem"))

	cmd := exec.Command(filepath.Join(bins, "pebble"), "-config", config, "-dnsserver", dnsserver)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	var out bytes.Buffer // written until Wait returns, read after
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("pebble: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Pebble's output:\n%s", out.String())
		}
	})
	eventually(t, time.Minute, "Pebble serves its directory", func() error {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("pebble exited: %v", err)
		default:
		}
		_, err := p.get(t, p.directory)
		return err
	})
	return p
}

// writePebbleConfig writes Pebble's configuration to file: its ACME and
// management listeners, its HTTPS certificate and key, one second between
// a client's polls of an authorization or an order, and a default profile.
// It offers no HTTP-01 or TLS-ALPN-01 port: the clients solve DNS-01.
func writePebbleConfig(t *testing.T, file, listen, mgmt, cert, key string) {
	t.Helper()
	type profile struct {
		Description    string `json:"description"`
		ValidityPeriod int    `json:"validityPeriod"`
	}
	var config struct {
		Pebble struct {
			ListenAddress           string             `json:"listenAddress"`
			ManagementListenAddress string             `json:"managementListenAddress"`
			Certificate             string             `json:"certificate"`
			PrivateKey              string             `json:"privateKey"`
			KeyAlgorithm            string             `json:"keyAlgorithm"`
			RetryAfter              map[string]int     `json:"retryAfter"`
			Profiles                map[string]profile `json:"profiles"`
		} `json:"pebble"`
	}
	c := &config.Pebble
	c.ListenAddress, c.ManagementListenAddress, c.Certificate, c.PrivateKey = listen, mgmt, cert, key
	c.KeyAlgorithm = "ecdsa"
	c.RetryAfter = map[string]int{"authz": 1, "order": 1}
	c.Profiles = map[string]profile{"default": {Description: "90 days", ValidityPeriod: 90 * 24 * 3600}}
	b, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// get returns the body of a GET of url, on Pebble's HTTPS listeners.
func (p *pebble) get(t *testing.T, url string) ([]byte, error) {
	t.Helper()
	ca, err := os.ReadFile(p.caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("%s holds no certificate", p.caFile)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, err
}

// root returns the root certificate Pebble issues under: made anew at each
// start, served by its management interface.
func (p *pebble) root(t *testing.T) *x509.Certificate {
	t.Helper()
	body, err := p.get(t, p.mgmt+"/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(body)
	if block == nil {
		t.Fatalf("Pebble's root is no PEM: %q", body)
	}
	root, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return root
}
