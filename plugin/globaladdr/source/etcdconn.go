package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// etcdTimeout bounds one etcd request, and is the keep-alive interval of
// globaladdr's own connection, as in the etcd plugin.
const etcdTimeout = 5 * time.Second

// defaultEndpoint is the etcd plugin's default endpoint.
const defaultEndpoint = "http://localhost:2379"

// reconnect is how globaladdr's own connection retries a lost etcd: gRPC's
// backoff, but capped at 2 s instead of 2 minutes, so that a change made
// once etcd is back is served soon.
var reconnect = grpc.ConnectParams{Backoff: backoff.Config{
	BaseDelay:  100 * time.Millisecond,
	Multiplier: backoff.DefaultConfig.Multiplier,
	Jitter:     backoff.DefaultConfig.Jitter,
	MaxDelay:   2 * time.Second,
}}

var errConnClosed = errors.New("the etcd connection is closed")

// etcdConn is the etcd connection of a block's etcd sources: the one of the
// block's etcd plugin, or, when the block has none or endpoint, tls or
// credentials are given, one of globaladdr's own.
type etcdConn struct {
	endpoints          []string
	tls                *tls.Config
	username, password string
	// configured is set when endpoint, tls or credentials are given.
	configured bool

	mu     sync.Mutex
	client *clientv3.Client
	owned  bool // globaladdr opened client and closes it
	closed bool
}

func newEtcdConn() *etcdConn { return &etcdConn{endpoints: []string{defaultEndpoint}} }

// share makes the sources use shared, the client of the block's etcd plugin,
// unless it is nil or the Corefile configures a connection of globaladdr's
// own.
func (e *etcdConn) share(shared *clientv3.Client) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if shared != nil && !e.configured {
		e.client = shared
	}
}

// get returns the client, opening globaladdr's own on first use. Opening
// does not wait for etcd, except to log in with credentials: that is
// bounded by etcdTimeout, and ctx ends it.
func (e *etcdConn) get(ctx context.Context) (*clientv3.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, errConnClosed
	case e.client != nil:
		return e.client, nil
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:         e.endpoints,
		TLS:               e.tls,
		Username:          e.username,
		Password:          e.password,
		DialTimeout:       etcdTimeout,
		DialKeepAliveTime: etcdTimeout,
		DialOptions:       []grpc.DialOption{grpc.WithConnectParams(reconnect)},
		Context:           ctx,
		Logger:            zap.NewNop(), // failures are logged by the sources
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd: %w", err)
	}
	e.client, e.owned = c, true
	return c, nil
}

// close closes the client if globaladdr opened it; the etcd plugin closes
// its own. The sources must have stopped.
func (e *etcdConn) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, owned := e.client, e.owned
	e.client, e.owned, e.closed = nil, false, true
	if !owned {
		return nil
	}
	return c.Close()
}
