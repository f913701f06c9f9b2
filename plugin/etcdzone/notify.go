package etcdzone

import (
	"context"
	"strings"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"
)

// announce has the transfer plugin notify z's secondaries each time z's
// serial moved, from the first load on. The moves within a second of the
// last NOTIFY wait for the next one, together: a burst of writes gives two
// NOTIFYs, not one per write.
func (x *EtcdZone) announce(ctx context.Context, z *blockZone) {
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-z.SerialMoved():
		}
		if !wait.For(ctx, time.Until(last.Add(time.Second))) {
			return
		}
		select {
		case <-z.SerialMoved(): // came meanwhile: this NOTIFY covers it
		default:
		}
		last = time.Now()
		log.Infof("zone %s: serial %d; notifying the secondaries", z, z.Current().Serial.Value())
		if err := x.xfr.Notify(z.Name()); err != nil {
			log.Warningf("zone %s: %s", z, oneLine(err))
			z.metrics.inc(notifyErrors)
		}
	}
}

// oneLine returns err's message on one line: the transfer plugin joins the
// failures of several secondaries with newlines, and a log line must not
// go on without its level.
func oneLine(err error) string {
	return strings.Join(strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' }), "; ")
}
