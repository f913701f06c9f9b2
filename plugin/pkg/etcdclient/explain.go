package etcdclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// probeTimeout bounds the try of one endpoint that names why etcd does not
// answer.
const probeTimeout = 2 * time.Second

// Explain returns err with its cause in words. The etcd client says only
// "context deadline exceeded" when no endpoint can be reached: then each
// endpoint is tried (its TCP connection, its TLS handshake and the server's
// verdict on the client's certificate) and each failure named. A refused
// permission names the user.
func (c *Client) Explain(err error) error {
	var done *explained
	switch {
	case err == nil, errors.As(err, &done):
		return err
	case errors.Is(rpctypes.Error(err), rpctypes.ErrPermissionDenied):
		who := "the user of the client certificate's common name"
		if c.cfg.Username != "" {
			who = fmt.Sprintf("user %q", c.cfg.Username)
		}
		return &explained{err, who + " lacks the permission (an etcd role must grant it)"}
	case errors.Is(err, context.DeadlineExceeded), status.Code(err) == codes.Unavailable, status.Code(err) == codes.DeadlineExceeded:
		if causes := c.probe(); causes != "" {
			return &explained{err, causes}
		}
	}
	return err
}

// explained is an error with its cause in words.
type explained struct {
	err   error
	cause string
}

// Error implements error.
func (e *explained) Error() string { return e.err.Error() + ": " + e.cause }

// Unwrap returns the error explained.
func (e *explained) Unwrap() error { return e.err }

// probe tries every endpoint at once, and returns the failures, each with
// its endpoint; "" when every endpoint takes a connection.
func (c *Client) probe() string {
	eps := c.cfg.endpoints()
	causes := make([]string, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			defer cancel()
			if err := probeEndpoint(ctx, ep, c.cfg.TLS); err != nil {
				causes[i] = ep + ": " + err.Error()
			}
		})
	}
	wg.Wait()
	var failed []string
	for _, s := range causes {
		if s != "" {
			failed = append(failed, s)
		}
	}
	return strings.Join(failed, "; ")
}

// probeEndpoint connects to ep as the etcd client does, and returns why that
// fails, nil when etcd takes the connection.
func probeEndpoint(ctx context.Context, ep string, cfg *tls.Config) error {
	network, addr, host := "tcp", ep, ""
	if u, err := url.Parse(ep); err == nil && strings.Contains(ep, "://") {
		addr, host = u.Host, u.Hostname()
		if u.Scheme == "unix" || u.Scheme == "unixs" {
			network, addr = "unix", u.Host+u.Path
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if !secure(ep) {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"h2"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return describeTLS(err)
	}
	// With TLS 1.3 a server that refuses the client's certificate says so
	// after the handshake: its answer to the HTTP/2 preface tells.
	if _, err := tc.Write([]byte(http2.ClientPreface)); err != nil {
		return describeTLS(err)
	}
	if _, err := tc.Read(make([]byte, 1)); err != nil {
		return describeTLS(err)
	}
	return nil
}

// describeTLS names the cause of a failed TLS connection in words.
func describeTLS(err error) error {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("the server's certificate is not signed by the CA that tls names: %w", err)
	case errors.As(err, &hostname):
		return fmt.Errorf("the server's certificate is not for this host name: %w", err)
	case errors.As(err, &invalid):
		return fmt.Errorf("the server's certificate is not valid: %w", err)
	case strings.Contains(err.Error(), "remote error: tls"), strings.Contains(err.Error(), "broken pipe"),
		strings.Contains(err.Error(), "connection reset"), errors.Is(err, net.ErrClosed):
		return fmt.Errorf("etcd refused the client certificate (none given, or not signed by its --trusted-ca-file): %w", err)
	}
	return err
}
