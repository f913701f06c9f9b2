package test

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// cleartextPassword is the password of the user the Corefiles of
// TestNoCredentialsInClear log in as: the relay must never carry it.
const cleartextPassword = "relay-secret-7f3a"

// cleartextCorefiles are Corefiles with etcd credentials in each plugin that
// takes them, and in each place a user writes them, with the line of the
// credentials, the plugin the refusal names, and whether an https://
// ENDPOINT makes them work (the mixed placements never do: the plugin with
// the credentials has no endpoint of its own, and would send them to
// the default http://localhost:2379).
var cleartextCorefiles = []struct {
	name, plugin, corefile string
	line                   int
	secure                 bool
}{
	{"etcd", "etcd", `example.com:{port:dns} {
    etcd example.com {
        endpoint ENDPOINT
        credentials coredns ` + cleartextPassword + `
        tls TLS
    }
}`, 4, true},
	{"etcdzone", "etcdzone", `example.com:{port:dns} {
    etcdzone {
        endpoint ENDPOINT
        credentials coredns ` + cleartextPassword + `
        tls TLS
    }
    etcd example.com
}`, 4, true},
	{"globaladdr from etcd", "globaladdr", `example.com:{port:dns} {
    globaladdr {
        from etcd /globaladdr/address
        endpoint ENDPOINT
        credentials coredns ` + cleartextPassword + `
        tls TLS
    }
    etcd example.com
}`, 5, true},
	{"webhook", "webhook", `example.com:{port:dns} {
    webhook 127.0.0.1:{httpport:webhook} {
        endpoint ENDPOINT
        credentials coredns ` + cleartextPassword + `
        tls TLS
    }
}`, 4, true},
	{"credentials under etcdzone, endpoint under etcd", "etcdzone", `example.com:{port:dns} {
    etcdzone {
        credentials coredns ` + cleartextPassword + `
    }
    etcd example.com {
        endpoint ENDPOINT
    }
}`, 3, false},
	{"credentials under etcd, endpoint under etcdzone", "etcd", `example.com:{port:dns} {
    etcdzone {
        endpoint ENDPOINT
        tls TLS
    }
    etcd example.com {
        credentials coredns ` + cleartextPassword + `
    }
}`, 7, false},
}

// TestNoCredentialsInClear starts each of cleartextCorefiles against an etcd
// with auth behind a relay that records every byte a client sends: with an
// http:// endpoint, start-up (and a reload to it) stops with an error naming
// the plugin, the line and plaintext_credentials, before anything crosses
// the relay; with https:// the same Corefile starts, and the password never
// crosses it in clear.
func TestNoCredentialsInClear(t *testing.T) {
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	lab.AddUser(t, "coredns", cleartextPassword, etcdlab.Perm{Prefix: "/skydns/", Write: true}, etcdlab.Perm{Prefix: "/globaladdr/"})
	tlsArgs := lab.Client.CertFile + " " + lab.Client.KeyFile + " " + lab.CA.CertFile
	for _, tc := range cleartextCorefiles {
		t.Run(tc.name, func(t *testing.T) {
			// A relay of its own: nothing a case before left running
			// reaches it.
			relay := startRelay(t, strings.TrimPrefix(lab.Member.ClientURL, "https://"))
			corefile := func(scheme string) string {
				return strings.NewReplacer("ENDPOINT", scheme+"://"+relay.addr, "TLS", tlsArgs).Replace(tc.corefile)
			}
			_, err := tryStartCoreDNS(t, corefile("http"))
			checkRefusal(t, err, tc.plugin, tc.line)
			safe := startCoreDNS(t, "example.com:{port:dns} {\n    whoami\n}")
			checkRefusal(t, safe.TryReload(corefile("http")), tc.plugin, tc.line)
			if n, sent := relay.seen(); n > 0 || len(sent) > 0 {
				t.Errorf("the refused Corefile opened %d connections through the relay (%d bytes sent)", n, len(sent))
			}
			if !tc.secure {
				return
			}
			c := startCoreDNS(t, corefile("https"))
			eventually(t, 30*time.Second, "a connection through the relay", func() error {
				if n, _ := relay.seen(); n == 0 {
					return io.EOF
				}
				return nil
			})
			c.Stop()
			if _, sent := relay.seen(); bytes.Contains(sent, []byte(cleartextPassword)) {
				t.Errorf("the password crossed the relay in clear over https://")
			}
		})
	}
}

// checkRefusal fails t unless err is the refusal of credentials in clear by
// plugin at line of the Corefile.
func checkRefusal(t *testing.T, err error, plugin string, line int) {
	t.Helper()
	for _, want := range []string{"plugin/" + plugin + ":", "Corefile:" + strconv.Itoa(line) + " ", "example.com:", "plaintext_credentials", "would send the password in clear"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("start-up: %v, want an error with %q", err, want)
		}
	}
}

// relay forwards TCP connections to a target, recording every byte the
// clients send.
type relay struct {
	addr string
	mu   sync.Mutex
	n    int
	sent bytes.Buffer
}

// startRelay starts a relay to target on a free loopback port until t ends.
func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { r.forward(client, target) })
		}
	})
	return r
}

// forward relays client to target until either side closes.
func (r *relay) forward(client net.Conn, target string) {
	defer client.Close()
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
	server, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	defer server.Close()
	go func() { io.Copy(client, server); client.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			r.mu.Lock()
			r.sent.Write(buf[:n])
			r.mu.Unlock()
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// seen returns how many connections the relay took, and the bytes their
// clients sent.
func (r *relay) seen() (int, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, bytes.Clone(r.sent.Bytes())
}
