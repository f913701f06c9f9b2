// Package etcdlab runs etcd as operators run it, for the tests that need a
// release's server rather than the embedded one: members of an etcd
// release's binary with TLS and client certificates, auth with a root user
// and users of their own roles, and clusters in network namespaces that a
// test can cut apart and heal.
package etcdlab

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/testpki"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// startTimeout bounds how long a member may take to serve.
const startTimeout = 60 * time.Second

// Member is one etcd server process of a release's binary, serving its
// clients over TLS with client-certificate authentication.
type Member struct {
	bin  string
	args []string
	// ClientURL is the URL the member serves its clients on.
	ClientURL string
	// tls is a client configuration that trusts the member.
	tls *tls.Config

	cmd *exec.Cmd
	out *lockedbuf.Buffer
}

// StartMember starts bin, an etcd server, as a single member on a free
// loopback port, serving with server's certificate and trusting the client
// certificates of ca, with extra arguments (e.g. --auth-token-ttl), and
// waits until it serves; client, a certificate of ca, connects to wait.
// It stops when t ends.
func StartMember(t testing.TB, bin string, ca *testpki.CA, server, client testpki.Pair, extra ...string) *Member {
	t.Helper()
	ports := make([]int, 2)
	for i := range ports {
		p, err := corednstest.FreeTCPPort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = p
	}
	clientURL := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	peerURL := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	m := &Member{
		bin: bin,
		args: append([]string{
			"--name", "m0", "--data-dir", t.TempDir(),
			"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "m0=" + peerURL,
			"--cert-file", server.CertFile, "--key-file", server.KeyFile,
			"--trusted-ca-file", ca.CertFile, "--client-cert-auth",
			"--log-level", "warn",
		}, extra...),
		ClientURL: clientURL,
		tls:       ClientTLS(t, ca, client),
	}
	m.Start(t)
	t.Cleanup(m.Stop)
	return m
}

// ClientTLS returns a client's TLS configuration: client's certificate,
// trusting ca.
func ClientTLS(t testing.TB, ca *testpki.CA, client testpki.Pair) *tls.Config {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(client.CertFile, client.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := ca.Pool()
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}
}

// Start starts the member (again, with its data), and waits until it
// serves.
func (m *Member) Start(t testing.TB) {
	t.Helper()
	m.out = new(lockedbuf.Buffer)
	m.cmd = exec.Command(m.bin, m.args...)
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", m.bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- m.cmd.Wait() }()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{m.ClientURL}, TLS: m.tls, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Status(ctx, m.ClientURL)
		cancel()
		switch {
		case err == nil:
			return
		case time.Now().After(deadline):
			t.Fatalf("%s does not serve after %s: %v\n%s", m.bin, startTimeout, err, m.out)
		}
		select {
		case err := <-done:
			t.Fatalf("%s exited: %v\n%s", m.bin, err, m.out)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops the member; its data stays for Start.
func (m *Member) Stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		m.cmd = nil
	}
}

// Log returns what the member logged.
func (m *Member) Log() string { return m.out.String() }

// String names the member in test messages.
func (m *Member) String() string { return fmt.Sprintf("etcd %s at %s", m.bin, m.ClientURL) }
