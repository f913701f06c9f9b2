// Package webhook is the webhook plugin: external-dns's webhook provider
// API, served beside a server block, writing the records external-dns
// manages into etcd as its in-tree coredns provider does (see package
// records), with the exposure mark its annotation gives (horizon.Mark).
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
	"github.com/globaladdr/globaladdr/plugin/webhook/records"
)

// Webhook is one webhook directive: the API's and health's listeners, and
// the store they write to.
type Webhook struct {
	addr, healthAddr string
	conn             etcdclient.Config
	store            records.Store

	mu      sync.Mutex
	client  *etcdclient.Client
	servers []*http.Server
	// bound are the addresses the servers listen on, in their order.
	bound []net.Addr
	// logged holds the refusals already logged, so that a sync a minute
	// does not log the same one again.
	logged sync.Map
	// body is the cap on the API's bodies, and follows GET /records's
	// replies against it.
	body bodyLimit
}

const (
	// requestTimeout bounds each request's work: external-dns's client
	// gives up after 15 s, and retries a 5xx.
	requestTimeout = 10 * time.Second
	// shutdownTimeout is how long a stop waits for requests under way.
	shutdownTimeout = 5 * time.Second
	// headerTimeout bounds reading a request's headers, and idleTimeout
	// how long a kept-alive connection waits for the next: external-dns
	// v0.23's own webhook servers' defaults.
	headerTimeout = 5 * time.Second
	idleTimeout   = 30 * time.Second
)

// cutOff is what the webhook does while etcd does not answer, as its
// warning says: it holds no copy of the tree to answer from.
const cutOff = "answering external-dns 503, which it retries at its next sync"

// start opens the etcd connection and the listeners: the API on addr, and
// /healthz on healthAddr when given. It fails, naming the address, when one
// can't listen.
func (w *Webhook) start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	client, err := etcdclient.New(w.conn, log, etcdclient.CutOff(cutOff))
	if err != nil {
		return fmt.Errorf("%s: %w", pluginName, err)
	}
	w.client = client
	w.store.KV = client
	if err := w.serve(w.addr, w.api(), "external-dns webhook API"); err != nil {
		return err
	}
	if w.healthAddr != "" {
		return w.serve(w.healthAddr, w.health(), "/healthz")
	}
	return nil
}

// serve listens on addr and serves h there, what in the log; on an error,
// everything started is closed.
func (w *Webhook) serve(addr string, h http.Handler, what string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		w.closeLocked()
		return fmt.Errorf("%s: %w", pluginName, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout}
	w.servers = append(w.servers, srv)
	w.bound = append(w.bound, ln.Addr())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Errorf("%s: %v", ln.Addr(), err)
		}
	}()
	log.Infof("%s on %s", what, ln.Addr())
	return nil
}

// stop closes the listeners, after the requests under way, and the etcd
// connection.
func (w *Webhook) stop() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked()
	return nil
}

// closeLocked is stop, with w.mu held.
func (w *Webhook) closeLocked() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, srv := range w.servers {
		srv.Shutdown(ctx)
	}
	w.servers, w.bound = nil, nil
	if w.client != nil {
		w.client.Close()
		w.client = nil
	}
}
