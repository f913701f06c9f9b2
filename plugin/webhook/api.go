package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
	"github.com/globaladdr/globaladdr/plugin/webhook/records"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// api returns the API's routes, as external-dns's webhook client calls
// them.
func (w *Webhook) api() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", w.negotiate)
	mux.HandleFunc("GET /records", w.records)
	mux.HandleFunc("POST /records", w.apply)
	mux.HandleFunc("POST /adjustendpoints", w.adjust)
	return counted(mux)
}

// health returns the probes' routes: /healthz, liveness, answers while the
// API listens, whether etcd does or not (a restart would not bring etcd
// back); /readyz, readiness, answers 200 while etcd answers a read of the
// tree and 503 with the reason while it does not (external-dns's changes
// would get 503).
func (w *Webhook) health() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rw.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", w.readyz)
	return mux
}

// readyTimeout bounds /readyz's read of the tree: below the probes'
// timeout (external-dns's chart: 5 s).
const readyTimeout = 3 * time.Second

// readyz answers whether etcd answers a read of the tree: one key of it,
// read as every request reads (a linearizable read, which needs etcd's
// quorum), with the permission the webhook's user has.
func (w *Webhook) readyz(rw http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := w.store.Reachable(ctx); err != nil {
		if w.client != nil {
			err = w.client.Explain(err)
		}
		rw.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(rw, "etcd at %s does not answer a read of %s: %v\n", w.conn.String(), w.store.Prefix, err)
		return
	}
	rw.Write([]byte("ok\n"))
}

// negotiate answers GET /: the media type, and the domains the plugin
// manages, its block's zones.
func (w *Webhook) negotiate(rw http.ResponseWriter, r *http.Request) {
	if !accepts(rw, r) {
		return
	}
	reply(rw, http.StatusOK, wire.DomainFilter{Include: w.store.Zones})
}

// records answers GET /records: the endpoints the tree holds.
func (w *Webhook) records(rw http.ResponseWriter, r *http.Request) {
	if !accepts(rw, r) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	eps, err := w.store.Records(ctx)
	if err != nil {
		w.etcdFailed(rw, "reading the records", err)
		return
	}
	if eps == nil {
		eps = []*wire.Endpoint{}
	}
	b, err := json.Marshal(eps)
	if err != nil {
		fail(rw, http.StatusInternalServerError, err.Error())
		return
	}
	w.body.observe(len(b), len(eps))
	write(rw, http.StatusOK, b)
}

// apply answers POST /records: it writes the change set, and answers 204
// (external-dns's client takes any other status for a failure).
func (w *Webhook) apply(rw http.ResponseWriter, r *http.Request) {
	var ch wire.Changes
	if !w.decode(rw, r, &ch) {
		return
	}
	for _, eps := range [][]*wire.Endpoint{ch.UpdateNew, ch.Create} {
		for _, ep := range eps {
			if v, ok := ep.Property(horizon.MarkProperty); ok {
				if _, valid := horizon.ParseMark(v); !valid {
					log.Warningf("%s %s: %s is %q, neither \"true\" nor \"false\": it is kept out of the external view", ep.DNSName, ep.RecordType, horizon.MarkProperty, v)
				}
			}
			if v, ok := ep.Property(horizon.RouteProperty); ok {
				if _, valid := horizon.ParseRoute(v); !valid {
					log.Warningf("%s %s: %s is %q, neither \"tunnel\" nor \"address\": it names no target, and is kept out of the external view", ep.DNSName, ep.RecordType, horizon.RouteProperty, v)
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	res, err := w.store.Apply(ctx, &ch)
	w.refused(res.Refused)
	if err != nil {
		w.etcdFailed(rw, "writing the changes", err)
		return
	}
	if res.Puts+res.Deletes > 0 {
		log.Infof("changes of %d endpoints: %d keys written, %d deleted", len(ch.Create)+len(ch.UpdateNew)+len(ch.Delete), res.Puts, res.Deletes)
	}
	keysWritten.WithLabelValues("put").Add(float64(res.Puts))
	keysWritten.WithLabelValues("delete").Add(float64(res.Deletes))
	rw.WriteHeader(http.StatusNoContent)
}

// adjust answers POST /adjustendpoints: the endpoints external-dns wants,
// without those the tree can't hold (logged), and without the properties
// the tree does not keep.
func (w *Webhook) adjust(rw http.ResponseWriter, r *http.Request) {
	var eps []*wire.Endpoint
	if !accepts(rw, r) || !w.decode(rw, r, &eps) {
		return
	}
	kept, refused := w.store.Adjust(eps)
	w.refused(refused)
	reply(rw, http.StatusOK, kept)
}

// refused logs each endpoint the tree can't hold, once per endpoint and
// reason: external-dns asks again at every sync.
func (w *Webhook) refused(rs []records.Refusal) {
	for _, r := range rs {
		refusedEndpoints.Inc()
		line := fmt.Sprintf("%s %s %v is not stored: %v", r.Endpoint.DNSName, r.Endpoint.RecordType, r.Endpoint.Targets, r.Reason)
		if _, seen := w.logged.LoadOrStore(line, true); !seen {
			log.Warning(line)
		}
	}
}

// etcdFailed answers 503 for an etcd failure while doing what:
// external-dns's client retries a 5xx, and its next sync starts again.
func (w *Webhook) etcdFailed(rw http.ResponseWriter, what string, err error) {
	if w.client != nil {
		err = w.client.Explain(err)
	}
	log.Errorf("%s in etcd at %s: %v", what, w.conn.String(), err)
	fail(rw, http.StatusServiceUnavailable, fmt.Sprintf("%s in etcd: %v", what, err))
}

// accepts reports whether r's Accept header allows the protocol's media
// type (no header allows everything); else it answers 406.
func accepts(rw http.ResponseWriter, r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return true
	}
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			if mediaMatches(part, true) {
				return true
			}
		}
	}
	fail(rw, http.StatusNotAcceptable, fmt.Sprintf("Accept %q does not allow %s", strings.Join(accept, ", "), wire.MediaType))
	return false
}

// decode reads r's body, JSON of the protocol's media type, into v; else
// it answers 415 (another media type), 413 (over max_body_size) or 400 (not the
// JSON v is), with the reason.
func (w *Webhook) decode(rw http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !mediaMatches(ct, false) {
		fail(rw, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not %s", ct, wire.MediaType))
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(rw, r.Body, w.body.max))
	if err := dec.Decode(v); err != nil {
		if _, over := errors.AsType[*http.MaxBytesError](err); over {
			reason := fmt.Sprintf("%s %s: the body is over max_body_size %s: split the zones between external-dns instances (--domain-filter), or raise max_body_size", r.Method, r.URL.Path, sizeText(w.body.max))
			log.Error(reason)
			fail(rw, http.StatusRequestEntityTooLarge, reason)
			return false
		}
		fail(rw, http.StatusBadRequest, fmt.Sprintf("the body is not the JSON of %s: %v", what(v), err))
		return false
	}
	if dec.More() {
		fail(rw, http.StatusBadRequest, "the body holds more than one JSON value")
		return false
	}
	return true
}

// what names the body v holds, for errors.
func what(v any) string {
	if _, ok := v.(*wire.Changes); ok {
		return "a change set"
	}
	return "a list of endpoints"
}

// mediaMatches reports whether text, a media range (from Accept when
// ranges) or a media type, is the protocol's: its type and version, or
// application/json (which names the same JSON); with ranges, also */* and
// application/*.
func mediaMatches(text string, ranges bool) bool {
	typ, params, err := mime.ParseMediaType(strings.TrimSpace(text))
	if err != nil {
		return false
	}
	want, wantParams, _ := mime.ParseMediaType(wire.MediaType)
	switch {
	case typ == want:
		v, ok := params["version"]
		return !ok || v == wantParams["version"]
	case typ == "application/json":
		return true
	case ranges:
		return typ == "*/*" || typ == "application/*"
	}
	return false
}

// reply answers status with v's JSON, in the protocol's media type.
func reply(rw http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fail(rw, http.StatusInternalServerError, err.Error())
		return
	}
	write(rw, status, b)
}

// write answers status with b, JSON, in the protocol's media type.
func write(rw http.ResponseWriter, status int, b []byte) {
	rw.Header().Set("Content-Type", wire.MediaType)
	rw.WriteHeader(status)
	rw.Write(append(b, '\n'))
}

// fail answers status with the reason in text.
func fail(rw http.ResponseWriter, status int, reason string) {
	http.Error(rw, reason, status)
}
