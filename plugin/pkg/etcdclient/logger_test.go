package etcdclient

import (
	"bytes"
	golog "log"
	"os"
	"strings"
	"testing"

	clog "github.com/coredns/coredns/plugin/pkg/log"

	"go.uber.org/zap"
)

// TestLogger routes the etcd client's zap log into CoreDNS's at its levels,
// each message at most once in repeatEvery, debug left out, and the
// warning of each failed try of a request too (its debug).
func TestLogger(t *testing.T) {
	var out bytes.Buffer
	golog.SetOutput(&out)
	defer golog.SetOutput(os.Stderr)
	lg := newLogger(clog.NewWithPlugin("etcdzone")).With(zap.String("endpoint", "https://10.0.0.1:2379"))
	lg.Debug("retrying")
	lg.Info("connected")
	lg.Warn("retrying of unary invoker failed", zap.Int("attempt", 0))
	lg.Warn("retrying of unary invoker failed", zap.Int("attempt", 1))
	lg.Error("getToken failed")
	lg.Warn("lease keepalive response queue is full; dropping response send")
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`[INFO] plugin/etcdzone: etcd client: connected {"endpoint": "https://10.0.0.1:2379"}`,
		`[ERROR] plugin/etcdzone: etcd client: getToken failed {"endpoint": "https://10.0.0.1:2379"}`,
		`[WARNING] plugin/etcdzone: etcd client: lease keepalive response queue is full; dropping response send {"endpoint": "https://10.0.0.1:2379"}`,
	}
	if len(got) != len(want) {
		t.Fatalf("logged\n%s\nwant %d lines", out.String(), len(want))
	}
	for i := range want {
		if !strings.HasSuffix(got[i], want[i]) {
			t.Errorf("line %d: %q, want it to end with %q", i, got[i], want[i])
		}
	}
}
