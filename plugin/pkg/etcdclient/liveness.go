package etcdclient

import (
	"context"
	"sync/atomic"
	"time"
)

const (
	// pingAfter is how long the client waits for an answer from etcd
	// before it asks etcd itself (the list of members): an idle
	// connection is checked that often.
	pingAfter = 5 * time.Second
	// pingTimeout bounds a ping: its failure, with its cause, is known
	// before Unreachable.
	pingTimeout = 3 * time.Second
	// Unreachable is how long without an answer from etcd makes the
	// client warn that it is cut off.
	Unreachable = 10 * time.Second
)

// watchLiveness asks etcd when the client has not heard from it for
// pingAfter, and logs a warning, with what the plugin does meanwhile
// (CutOff) and the cause, when it has not heard for Unreachable (or that
// etcd never answered, and the Corefile's endpoint line), and a line when it
// hears again, until ctx ends.
func (c *Client) watchLiveness(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var (
		pinging atomic.Bool
		cause   atomic.Pointer[error] // why the last ping failed
		warned  bool
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		silence := c.Silence()
		if silence >= pingAfter && pinging.CompareAndSwap(false, true) {
			go func() {
				defer pinging.Store(false)
				pctx, cancel := context.WithTimeout(ctx, pingTimeout)
				defer cancel()
				if _, err := c.MemberList(pctx); err != nil && ctx.Err() == nil {
					err = c.Explain(err)
					cause.Store(&err)
				}
			}()
		}
		switch {
		case silence >= Unreachable && !warned:
			warned = true
			why := "no answer"
			if err := cause.Load(); err != nil {
				why = (*err).Error()
			}
			if !c.everAnswered.Load() {
				// Nothing was read: the plugin has no memory to answer from.
				c.log.Warningf("etcd at %s%s: no answer in the %s since the start, nothing was ever read from it: is the endpoint right? %s", c, c.cfg.place(), silence.Round(time.Second), why)
				break
			}
			c.log.Warningf("etcd at %s: not heard from for %s, %s: %s", c, silence.Round(time.Second), c.cutOff, why)
		case silence < Unreachable && warned:
			warned = false
			c.log.Infof("etcd at %s answers again", c)
		}
	}
}
