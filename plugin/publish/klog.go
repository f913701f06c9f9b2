package publish

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// clientLog passes what client-go logs (the Lease election's attempts, and
// its failures while the API server is away) into CoreDNS's log, as
// publish's, instead of klog's own lines on standard error. klog has one
// logger per process, which may be set only before any goroutine logs:
// publish sets it when the program starts, and CoreDNS's kubernetes plugin,
// when a Corefile has it, sets its own.
type clientLog struct {
	values []any
}

func init() { klog.SetLogger(logr.New(&clientLog{})) }

// Init implements logr.LogSink.
func (*clientLog) Init(logr.RuntimeInfo) {}

// Enabled implements logr.LogSink: klog has judged the verbosity.
func (*clientLog) Enabled(int) bool { return true }

// Info implements logr.LogSink.
func (l *clientLog) Info(_ int, msg string, kv ...any) { log.Info(l.line(msg, kv)) }

// Error implements logr.LogSink.
func (l *clientLog) Error(err error, msg string, kv ...any) {
	log.Error(l.line(msg+": "+fmt.Sprint(err), kv))
}

// WithValues implements logr.LogSink.
func (l *clientLog) WithValues(kv ...any) logr.LogSink {
	return &clientLog{values: append(append([]any(nil), l.values...), kv...)}
}

// WithName implements logr.LogSink: the lines are publish's.
func (l *clientLog) WithName(string) logr.LogSink { return l }

// line returns msg and the key and value pairs, as key=value.
func (l *clientLog) line(msg string, kv []any) string {
	var b strings.Builder
	b.WriteString(msg)
	all := append(append([]any(nil), l.values...), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	return b.String()
}
