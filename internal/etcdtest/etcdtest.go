// Package etcdtest runs an embedded, single-member etcd server on free
// loopback ports, for tests and for the demo; it can be stopped and restarted
// on the same client URL, to test what happens while etcd is down. It listens
// on loopback only and keeps its data in a directory the caller discards: it
// is no etcd to run anything on.
package etcdtest

import (
	"errors"
	"fmt"
	"net/url"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// startTimeout bounds how long Start and Restart wait for the server to
// serve.
const startTimeout = 60 * time.Second

// reconnect is how the client dials a server it lost: gRPC's backoff
// capped at a second instead of 2 minutes, so that its first request
// after a Restart does not wait for the next of its widening tries (10 s
// and more after an outage of some seconds).
var reconnect = grpc.ConnectParams{Backoff: backoff.Config{
	BaseDelay:  100 * time.Millisecond,
	Multiplier: backoff.DefaultConfig.Multiplier,
	Jitter:     backoff.DefaultConfig.Jitter,
	MaxDelay:   time.Second,
}, MinConnectTimeout: 5 * time.Second}

// Server is an embedded etcd server and a client connected to it.
type Server struct {
	dir string
	// clientURL and peerURL are the URLs the server listens on. Before the
	// first start their port is 0 (any free port); afterwards they hold the
	// ports the server got, so a restart comes back on the same URLs.
	clientURL, peerURL url.URL

	mu     sync.Mutex
	etcd   *embed.Etcd // nil while stopped
	client *clientv3.Client
}

// Start starts an etcd server that keeps its data in dir and listens on free
// loopback ports, and waits until it serves. Close it when done.
func Start(dir string) (*Server, error) {
	s := &Server{
		dir:       dir,
		clientURL: url.URL{Scheme: "http", Host: "127.0.0.1:0"},
		peerURL:   url.URL{Scheme: "http", Host: "127.0.0.1:0"},
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{s.Endpoint()},
		DialTimeout: 5 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(reconnect)},
		Logger:      zap.NewNop(),
	})
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	s.client = cli
	return s, nil
}

// TB is what StartT needs of a test: *testing.T and *testing.B have it. It
// keeps the package free of the testing package, which the demo, built from
// it, would otherwise link.
type TB interface {
	Helper()
	TempDir() string
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// StartT starts a server for t, with its data in t's temporary directory,
// and closes it when t ends. t fails at once if the server does not start.
func StartT(t TB) *Server {
	t.Helper()
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatalf("etcd did not start: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Endpoint returns the server's client URL, e.g. "http://127.0.0.1:41234",
// as the etcd plugin's endpoint property and etcd clients take it. It does
// not change across Stop and Restart.
func (s *Server) Endpoint() string { return s.clientURL.String() }

// Client returns a client connected to the server. It stays usable across
// Stop and Restart (its requests fail while the server is stopped) and is
// closed by Close.
func (s *Server) Client() *clientv3.Client { return s.client }

// Stop stops the server and keeps its data. Requests fail until Restart.
// Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.etcd != nil {
		s.etcd.Close()
		s.etcd = nil
	}
}

// Restart starts a stopped server again, with its data, on the same client
// URL, and waits until it serves. Restarting a running server does nothing.
func (s *Server) Restart() error { return s.start() }

// Close stops the server and closes the client. The data directory stays:
// it belongs to the caller.
func (s *Server) Close() {
	s.Stop()
	if s.client != nil {
		s.client.Close()
	}
}

// start starts the server unless it runs, and waits until it serves.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.etcd != nil {
		return nil
	}
	e, err := s.listen()
	if err != nil {
		return fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return fmt.Errorf("etcd: %w", err)
	case <-time.After(startTimeout):
		e.Close()
		return errors.New("etcd: not ready within " + startTimeout.String())
	}
	if s.clientURL.Port() == "0" { // the first start: keep the ports for restarts
		s.clientURL.Host = e.Clients[0].Addr().String()
		s.peerURL.Host = e.Peers[0].Listener.Addr().String()
	}
	s.etcd = e
	return nil
}

// listen starts the server. While stopped, its ports were free for anyone:
// an outgoing connection of another test may hold one for a moment (the
// kernel hands out the same range to both), so a restart that finds its port
// in use tries again until startTimeout.
func (s *Server) listen() (*embed.Etcd, error) {
	deadline := time.Now().Add(startTimeout)
	for {
		e, err := embed.StartEtcd(s.config())
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || s.clientURL.Port() == "0" || time.Now().After(deadline) {
			return e, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// config returns the configuration of a quiet single-member server on s's
// URLs.
func (s *Server) config() *embed.Config {
	cfg := embed.NewConfig()
	cfg.Dir = s.dir
	cfg.ListenClientUrls = []url.URL{s.clientURL}
	cfg.AdvertiseClientUrls = []url.URL{s.clientURL}
	cfg.ListenPeerUrls = []url.URL{s.peerURL}
	cfg.AdvertisePeerUrls = []url.URL{s.peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// Test data needs no durability; skipping fsync makes writes fast.
	cfg.UnsafeNoFsync = true
	return cfg
}
