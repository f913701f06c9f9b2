package test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// webhookProxy passes external-dns's requests on to the webhook API, and
// makes a fault when a change set arrives (POST /records): the test arms it
// with one, then runs external-dns through it.
type webhookProxy struct {
	url string // where external-dns sends its requests

	mu     sync.Mutex
	target *url.URL
	fault  func()
	done   chan struct{}
}

// startWebhookProxy starts a proxy to the webhook API at target on a free
// loopback port; it stops when t ends.
func startWebhookProxy(t *testing.T, target string) *webhookProxy {
	t.Helper()
	p := &webhookProxy{}
	p.retarget(t, target)
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// retarget has p pass the requests on to the webhook API at target.
func (p *webhookProxy) retarget(t *testing.T, target string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = u
}

// arm has p call fault when the next change set arrives, after reading it
// whole and before passing it on. The change set is then passed on all the
// same, also when external-dns is gone meanwhile: the channel returned is
// closed once the webhook answered it.
func (p *webhookProxy) arm(fault func()) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault, p.done = fault, make(chan struct{})
	return p.done
}

func (p *webhookProxy) serve(rw http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	target, fault, done := p.target, func() {}, (chan struct{})(nil)
	if r.Method == http.MethodPost && r.URL.Path == "/records" && p.fault != nil {
		fault, done, p.fault, p.done = p.fault, p.done, nil, nil
	}
	p.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	fault()
	r.Body = io.NopCloser(bytes.NewReader(body))
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }}
	// Neither the request's context nor, without one, the ResponseWriter's
	// CloseNotify (which the struct hides) ends the request to the webhook
	// when external-dns goes away.
	proxy.ServeHTTP(struct{ http.ResponseWriter }{rw}, r.WithContext(context.WithoutCancel(r.Context())))
	if done != nil {
		close(done)
	}
}
