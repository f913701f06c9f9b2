// Package fixedview is a horizon.View for tests whose state is fixed: a
// backend's tests build it with the rules they need, and nothing changes
// it.
package fixedview

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// View is a view whose state is State.
type View struct{ State *horizon.State }

var _ horizon.View = View{}

// Current implements horizon.View.
func (v View) Current() *horizon.State { return v.State }

// Subscribe implements horizon.View: the state never changes.
func (v View) Subscribe(func()) func() { return func() {} }

// Serve implements horizon.View.
func (v View) Serve([]string) (undo func()) { return func() {} }

// Judged implements horizon.View.
func (v View) Judged(context.Context, []dns.RR, horizon.Place) {}

// Fallthrough implements horizon.View: the next plugin's answer, as it is.
func (v View) Fallthrough(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, next plugin.Handler) (int, error) {
	return plugin.NextOrFailure("view", next, ctx, w, r)
}
