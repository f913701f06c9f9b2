package source

import (
	"errors"
	"sync"

	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"
)

// etcdTimeout bounds one etcd request.
const etcdTimeout = etcdclient.Timeout

var errConnClosed = errors.New("the etcd connection is closed")

// etcdConn is the etcd connection of a block's etcd sources: the one
// endpoint, tls and credentials give, else the block's (see share).
type etcdConn struct {
	cfg etcdclient.Config

	mu     sync.Mutex
	client *etcdclient.Client
	closed bool
}

// share makes the sources connect over shared, the block's etcd connection
// (etcdzone's, or the etcd plugin's endpoints and credentials), unless the
// Corefile configures globaladdr's own. It returns why the connection must
// not be opened (credentials over http://).
func (e *etcdConn) share(shared etcdclient.Config) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.cfg.Given() {
		e.cfg = shared
	}
	return e.cfg.Check()
}

// String names the connection in log lines: its endpoints.
func (e *etcdConn) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg.String()
}

// get returns the client, opening it on first use. Opening does not wait
// for etcd.
func (e *etcdConn) get() (*etcdclient.Client, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return nil, errConnClosed
	case e.client != nil:
		return e.client, nil
	}
	c, err := etcdclient.New(e.cfg, log)
	if err != nil {
		return nil, err
	}
	e.client = c
	return c, nil
}

// close closes the client. The sources must have stopped.
func (e *etcdConn) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.client
	e.client, e.closed = nil, true
	if c == nil {
		return nil
	}
	return c.Close()
}

// explain is err with its cause in words, when the client can tell.
func (e *etcdConn) explain(err error) error {
	e.mu.Lock()
	c := e.client
	e.mu.Unlock()
	if c == nil {
		return err
	}
	return c.Explain(err)
}
