package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

const (
	// Timeout bounds each dial, login and read: every request of the
	// plugins to etcd takes it as its deadline.
	Timeout = 5 * time.Second
	// keepAlive is how often an idle connection is probed: after
	// keepAlive and keepAlive again without an answer, gRPC drops it and
	// dials again.
	keepAlive = 5 * time.Second
)

// reconnect is how the connection retries a lost etcd: gRPC's backoff, but
// capped at 2 s instead of 2 minutes, so that a change made once etcd is
// back is served soon.
var reconnect = grpc.ConnectParams{Backoff: backoff.Config{
	BaseDelay:  100 * time.Millisecond,
	Multiplier: backoff.DefaultConfig.Multiplier,
	Jitter:     backoff.DefaultConfig.Jitter,
	MaxDelay:   2 * time.Second,
}, MinConnectTimeout: Timeout}

// Client is an etcd client on a Config's connection. Opening it does not
// wait for etcd; it logs in (with credentials) before its first request,
// and again whenever etcd says the token is no longer valid, without
// sending the stale token. It tracks when it last heard from etcd, and
// warns when that is long ago.
type Client struct {
	*clientv3.Client
	cfg Config
	log clog.P
	// cutOff says what the plugin does while etcd does not answer.
	cutOff string

	// mu serializes logins; token is the auth token, "" before the
	// first login or without credentials.
	mu    sync.Mutex
	token atomic.Pointer[string]
	// heard is the time (Unix nanoseconds) etcd last answered, or the
	// client started; everAnswered whether it has answered at all.
	heard        atomic.Int64
	everAnswered atomic.Bool

	stop func()
}

// Option sets what a Client says of the plugin it serves.
type Option func(*Client)

// CutOff gives what the plugin does while etcd does not answer, for the
// warning the client logs then: "answering from memory" without it.
func CutOff(doing string) Option { return func(c *Client) { c.cutOff = doing } }

// New opens a client on cfg's connection, which must Check; its log lines
// go to log, the plugin's. It does not wait for etcd. Close it when done.
func New(cfg Config, log clog.P, opts ...Option) (*Client, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, log: log, cutOff: "answering from memory"}
	for _, opt := range opts {
		opt(c)
	}
	c.heard.Store(time.Now().UnixNano()) // a grace period at start-up
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            cfg.endpoints(),
		TLS:                  cfg.TLS,
		DialTimeout:          Timeout,
		DialKeepAliveTime:    keepAlive,
		DialKeepAliveTimeout: keepAlive,
		// The credentials are not the client's own: it would send its
		// stale token when it logs in again, which etcd 3.4 refuses.
		DialOptions: []grpc.DialOption{
			grpc.WithConnectParams(reconnect),
			grpc.WithPerRPCCredentials(tokenCredentials{c}),
			grpc.WithChainUnaryInterceptor(c.unary),
			grpc.WithChainStreamInterceptor(c.stream),
		},
		Logger: newLogger(log),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd at %s: %w", c, err)
	}
	c.Client = cli
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.watchLiveness(ctx) }()
	c.stop = func() { cancel(); <-done }
	return c, nil
}

// Close closes the client.
func (c *Client) Close() error {
	c.stop()
	return c.Client.Close()
}

// String names the connection in log lines: its endpoints.
func (c *Client) String() string { return c.cfg.String() }

// Silence returns how long ago etcd last answered the client.
func (c *Client) Silence() time.Duration {
	return time.Since(time.Unix(0, c.heard.Load()))
}

// hear notes that etcd answered.
func (c *Client) hear() {
	c.heard.Store(time.Now().UnixNano())
	c.everAnswered.Store(true)
}

// login logs in with the credentials, unless the token is no longer stale
// (another request logged in meanwhile); stale is the token etcd refused,
// nil before the first login.
func (c *Client) login(ctx context.Context, stale *string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.token.Load(); t != stale {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	resp, err := c.Client.Authenticate(ctx, c.cfg.Username, c.cfg.Password)
	switch {
	case errors.Is(err, rpctypes.ErrAuthNotEnabled):
		resp, err = &clientv3.AuthenticateResponse{}, nil
	case err != nil:
		return fmt.Errorf("logging in to etcd as %q: %w", c.cfg.Username, c.Explain(err))
	}
	c.token.Store(&resp.Token)
	return nil
}

// currentToken returns the token, "" without one.
func (c *Client) currentToken() string {
	if t := c.token.Load(); t != nil {
		return *t
	}
	return ""
}
