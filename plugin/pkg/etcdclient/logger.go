package etcdclient

import (
	"strings"
	"sync"
	"time"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// repeatEvery is how often the etcd client's same warning is logged: while
// etcd is unreachable, it warns at every retry.
const repeatEvery = 30 * time.Second

// retrying begins the warning the etcd client logs at each failed try of
// a request it tries again ("retrying of unary invoker failed"): while
// etcd is away, and for every request under way when the client closes
// (a reload, a shutdown). The request that fails at last is logged by the
// plugin that made it, with its cause in words, and an etcd that does not
// answer by the connection's liveness warning: it is logged at debug.
const retrying = "retrying of unary invoker"

// newLogger returns a zap logger for the etcd client that writes into
// CoreDNS's log, through log: zap's info, warnings and errors at CoreDNS's
// levels of the same names (debug is dropped: the client logs every retry
// there; its warning at each failed try, retrying, goes to CoreDNS's
// debug), each message at most once in repeatEvery.
func newLogger(log clog.P) *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zapcore.EncoderConfig{MessageKey: "msg", NameKey: "logger", ConsoleSeparator: " "})
	return zap.New(&clogCore{enc: enc, log: log, last: &lastLogged{at: map[string]time.Time{}}})
}

// clogCore is a zapcore.Core writing into CoreDNS's log.
type clogCore struct {
	enc  zapcore.Encoder
	log  clog.P
	last *lastLogged
}

// lastLogged is when each message was last logged.
type lastLogged struct {
	mu sync.Mutex
	at map[string]time.Time
}

// Enabled implements zapcore.LevelEnabler.
func (c *clogCore) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

// With implements zapcore.Core.
func (c *clogCore) With(fields []zapcore.Field) zapcore.Core {
	enc := c.enc.Clone()
	for _, f := range fields {
		f.AddTo(enc)
	}
	return &clogCore{enc: enc, log: c.log, last: c.last}
}

// Check implements zapcore.Core.
func (c *clogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write implements zapcore.Core.
func (c *clogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	if !c.last.due(e.Message, e.Time) {
		return nil
	}
	buf, err := c.enc.EncodeEntry(e, fields)
	if err != nil {
		return err
	}
	line := "etcd client: " + strings.TrimSpace(buf.String())
	buf.Free()
	switch {
	case strings.HasPrefix(e.Message, retrying):
		c.log.Debug(line)
	case e.Level >= zapcore.ErrorLevel:
		c.log.Error(line)
	case e.Level == zapcore.WarnLevel:
		c.log.Warning(line)
	default:
		c.log.Info(line)
	}
	return nil
}

// Sync implements zapcore.Core.
func (c *clogCore) Sync() error { return nil }

// due reports whether msg may be logged at t, and notes it if so.
func (l *lastLogged) due(msg string, t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if last, ok := l.at[msg]; ok && t.Sub(last) < repeatEvery {
		return false
	}
	l.at[msg] = t
	return true
}
