package etcdclient

import (
	"sync"
	"time"

	"github.com/coredns/caddy"
	clog "github.com/coredns/coredns/plugin/pkg/log"
)

// setupWait is how long the etcd plugin's set-up may take before
// GuardEtcdSetup logs that it waits for etcd.
const setupWait = 2 * Timeout

// guard is the pending warning of GuardEtcdSetup.
var guard struct {
	mu sync.Mutex
	t  *time.Timer
}

func init() {
	// Run once the etcd plugin's set-up has run for every server block.
	caddy.RegisterParsingCallback("dns", "etcd", func(caddy.Context) error {
		guard.mu.Lock()
		defer guard.mu.Unlock()
		if guard.t != nil {
			guard.t.Stop()
			guard.t = nil
		}
		return nil
	})
}

// GuardEtcdSetup is called by the set-up of a plugin that comes before the
// etcd plugin in plugin.cfg. The etcd plugin's set-up logs in, when its
// block gives it credentials, with no deadline: when etcd is unreachable,
// its TLS fails or it refuses the client's certificate, CoreDNS waits for
// ever, before any listener or log line. If that set-up has not ended
// setupWait later, an error says so through log.
func GuardEtcdSetup(log clog.P) {
	guard.mu.Lock()
	defer guard.mu.Unlock()
	if guard.t != nil {
		guard.t.Stop() // left by a start-up that failed before the etcd plugin's set-up
	}
	guard.t = time.AfterFunc(setupWait, func() {
		log.Errorf("the etcd plugin's set-up has waited %s for etcd: it logs in with the credentials of its block, with no deadline, for ever when etcd can't be reached or TLS fails; give endpoint, tls and credentials to etcdzone (and to globaladdr for from etcd), not to the etcd plugin", setupWait)
	})
}
