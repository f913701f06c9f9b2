package test

import (
	golog "log"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/lockedbuf"
)

// TestDynamicPrimaryWarning checks that a block that transfers its zone while
// its global address comes from a from source (a hidden primary on a
// dynamic address) warns at start, and that one with the address in the
// Corefile does not.
func TestDynamicPrimaryWarning(t *testing.T) {
	etcd := startEtcd(t)
	putGlobal(t, etcd, "203.0.113.10")
	const warning = "this block transfers its zones: if it is a hidden primary"
	for _, tc := range []struct {
		globaladdr string
		warns      bool
	}{
		{"globaladdr {\n\t\tfrom etcd " + globalKey + "\n\t}", true},
		{"globaladdr 203.0.113.10", false},
	} {
		var out lockedbuf.Buffer
		prev := golog.Writer()
		golog.SetOutput(&out)
		startCoreDNS(t, `example.com:{port:primary} {
	`+tc.globaladdr+`
	etcdzone {
		ns ns1.example.net
	}
	transfer {
		to 127.0.0.1
	}
	etcd example.com {
		endpoint `+etcd.Endpoint()+`
	}
}`).Stop()
		golog.SetOutput(prev)
		if got := strings.Contains(out.String(), warning); got != tc.warns {
			t.Errorf("%s: warned %v, want %v; log:\n%s", tc.globaladdr, got, tc.warns, out.String())
		}
	}
}
