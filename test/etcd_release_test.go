package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdRelease is an etcd release the README supports, and its server.
type etcdRelease struct {
	name string
	// bin returns the server's path, or ends t through prereq.
	bin func(t *testing.T) string
}

// etcdReleases are the supported releases: Debian's etcd-server (3.4), and
// 3.5 and 3.6 as `make etcd-bins` builds them from the Go module proxy
// (test/etcd/). The embedded server of the other tests is 3.7, the
// client's own release.
var etcdReleases = []etcdRelease{
	{"3.4", func(t *testing.T) string { return prereq.Program(t, "etcd", "etcd-server") }},
	{"3.5", builtEtcd("3.5")},
	{"3.6", builtEtcd("3.6")},
}

// builtEtcd returns the bin of a release that make etcd-bins builds.
func builtEtcd(release string) func(t *testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		bin, err := filepath.Abs(filepath.Join("..", "bin", "etcd", "etcd-"+release))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(bin); err != nil {
			prereq.Missing(t, "%s: run make etcd-bins", bin)
		}
		return bin
	}
}

// updateBlock takes ACME challenges on {port:VIEW} as USER.
const updateBlock = `example.com:{port:VIEW} {
	tsig {
		secret KEY SECRET
		require_opcode UPDATE
	}
	etcdzone {
		update KEY
		endpoint ETCD
		tls TLS
		credentials USER USER-secret
	}
	etcd example.com
}
`

// leastPrivilegeCorefile has the views as operators run them on a secure
// etcd at ETCD: the LAN view takes ACME challenges as a read-write user on
// /skydns/ (writer); the external view reads as a read-only one (reader),
// its global address from an etcd key it may read too, over etcdzone's
// connection; the block ro takes UPDATEs as the read-only user, which etcd
// refuses. TLS stands for the tls property's arguments.
var leastPrivilegeCorefile = strings.NewReplacer("VIEW", "lan", "USER", "writer").Replace(updateBlock) +
	strings.NewReplacer("VIEW", "ro", "USER", "reader").Replace(updateBlock) + `
example.com:{port:external} {
	globaladdr {
		from etcd /globaladdr/example.com
	}
	etcdzone {
		ns ns1.example.net
		endpoint ETCD
		tls TLS
		credentials reader reader-secret
	}
	etcd example.com
}
`

// startLeastPrivilege starts lab's users and CoreDNS serving
// leastPrivilegeCorefile on it, with app.example.com in etcd.
func startLeastPrivilege(t *testing.T, lab *etcdlab.Lab) *coreDNS {
	t.Helper()
	lab.AddUser(t, "writer", "writer-secret", etcdlab.Perm{Prefix: "/skydns/", Write: true})
	lab.AddUser(t, "reader", "reader-secret", etcdlab.Perm{Prefix: "/skydns/"}, etcdlab.Perm{Prefix: "/globaladdr/example.com"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := externaldns.Put(ctx, lab.Admin.Client, "/skydns", a("app.example.com", "192.168.0.51")); err != nil {
		t.Fatal(err)
	}
	if _, err := lab.Admin.Put(ctx, "/globaladdr/example.com", "203.0.113.10"); err != nil {
		t.Fatal(err)
	}
	c := startCoreDNS(t, strings.NewReplacer(
		"ETCD", lab.Member.ClientURL,
		"TLS", lab.Client.CertFile+" "+lab.Client.KeyFile+" "+lab.CA.CertFile,
		"KEY", nameserver.TestKey.Name,
		"SECRET", nameserver.TestKey.Secret,
	).Replace(leastPrivilegeCorefile))
	eventually(t, 30*time.Second, "the external view", func() error {
		return answers(c.Addr("external"), "app.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})
	eventually(t, 30*time.Second, "the LAN view", func() error {
		return answers(c.Addr("lan"), "app.example.com.", dns.TypeA, []string{"192.168.0.51"})
	})
	return c
}

// TestEtcdReleases runs each supported etcd release with TLS client
// certificates and auth, tokens that expire after 3 s idle, and the views
// with least privilege: reads, the watch and ACME UPDATEs work, also after
// the token expired and after the writer was deleted and created again; an
// UPDATE that etcd refuses (a read-only user) leaves no lease behind.
func TestEtcdReleases(t *testing.T) {
	t.Parallel()
	for _, r := range etcdReleases {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			lab := etcdlab.StartLab(t, r.bin(t), "--auth-token-ttl", "3")
			c := startLeastPrivilege(t, lab)
			update := func(what, text string) {
				t.Helper()
				m := challengeUpdate(nil, "_acme-challenge.app.example.com. "+text)
				if rcode := sendUpdate(t, "tcp", c.Addr("lan"), m, &nameserver.TestKey); rcode != dns.RcodeSuccess {
					t.Fatalf("UPDATE %s: %s, want NOERROR", what, dns.RcodeToString[rcode])
				}
				expectChallenges(t, c, what, "_acme-challenge.app.example.com.", allTokens(t, c, text)...)
			}
			update("at start", "token-1")

			time.Sleep(5 * time.Second) // idle: etcd drops the tokens (--auth-token-ttl 3)
			update("after the token expired", "token-2")
			putRecords2(t, lab, a("new.example.com", "192.168.0.52"))
			eventually(t, 5*time.Second, "a record written after the token expired", func() error {
				return answers(c.Addr("external"), "new.example.com.", dns.TypeA, []string{"203.0.113.10"})
			})

			lab.DeleteUser(t, "writer")
			lab.AddUser(t, "writer", "writer-secret", etcdlab.Perm{Prefix: "/skydns/", Write: true})
			update("after the user was created again", "token-3")

			leases := func() int {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				resp, err := lab.Admin.Leases(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return len(resp.Leases)
			}
			before := leases()
			m := challengeUpdate(nil, "_acme-challenge.app.example.com. refused")
			if rcode := sendUpdate(t, "tcp", c.Addr("ro"), m, &nameserver.TestKey); rcode != dns.RcodeServerFailure {
				t.Errorf("UPDATE as the read-only user: %s, want SERVFAIL", dns.RcodeToString[rcode])
			}
			if after := leases(); after != before {
				t.Errorf("the refused UPDATE left %d leases behind", after-before)
			}
		})
	}
}

// allTokens returns the challenge texts the LAN view holds, with text.
func allTokens(t *testing.T, c *coreDNS, text string) []string {
	t.Helper()
	_, got := challenges(t, c.Addr("lan"), "_acme-challenge.app.example.com.")
	for _, s := range got {
		if s == text {
			return got
		}
	}
	return append(got, text)
}

// putRecords2 writes records into the lab's etcd as external-dns does.
func putRecords2(t *testing.T, lab *etcdlab.Lab, records ...externaldns.Record) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range records {
		if err := externaldns.Put(ctx, lab.Admin.Client, "/skydns", r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEtcdAuthChangesAtRunTime revokes the writer's permission and deletes
// the reader at run time, on Debian's etcd 3.4 (whose tokens go stale on
// every change of auth): each is recovered from within seconds of being
// restored.
func TestEtcdAuthChangesAtRunTime(t *testing.T) {
	lab := etcdlab.StartLab(t, prereq.Program(t, "etcd", "etcd-server"))
	c := startLeastPrivilege(t, lab)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	update := func(text string) int {
		m := challengeUpdate(nil, "_acme-challenge.app.example.com. "+text)
		return sendUpdate(t, "tcp", c.Addr("lan"), m, &nameserver.TestKey)
	}

	if _, err := lab.Admin.RoleRevokePermission(ctx, "writer", "/skydns/", clientv3.GetPrefixRangeEnd("/skydns/")); err != nil {
		t.Fatal(err)
	}
	if rcode := update("revoked"); rcode != dns.RcodeServerFailure {
		t.Errorf("UPDATE without the permission: %s, want SERVFAIL", dns.RcodeToString[rcode])
	}
	if _, err := lab.Admin.RoleGrantPermission(ctx, "writer", "/skydns/", clientv3.GetPrefixRangeEnd("/skydns/"), clientv3.PermissionType(clientv3.PermReadWrite)); err != nil {
		t.Fatal(err)
	}
	restored := time.Now()
	eventually(t, 5*time.Second, "an UPDATE once the permission is back", func() error {
		if rcode := update("restored"); rcode != dns.RcodeSuccess {
			return fmt.Errorf("UPDATE: %s", dns.RcodeToString[rcode])
		}
		return nil
	})
	t.Logf("permission restored: UPDATE applied after %v", time.Since(restored).Round(100*time.Millisecond))

	lab.DeleteUser(t, "reader")
	putRecords2(t, lab, a("meanwhile.example.com", "192.168.0.53"))
	if err := answers(c.Addr("external"), "app.example.com.", dns.TypeA, []string{"203.0.113.10"}); err != nil {
		t.Errorf("the reader deleted: %v, want the answer from memory", err)
	}
	lab.AddUser(t, "reader", "reader-secret", etcdlab.Perm{Prefix: "/skydns/"}, etcdlab.Perm{Prefix: "/globaladdr/example.com"})
	restored = time.Now()
	putRecords2(t, lab, a("after.example.com", "192.168.0.54"))
	eventually(t, 5*time.Second, "the external view once the reader is back", func() error {
		if err := answers(c.Addr("external"), "meanwhile.example.com.", dns.TypeA, []string{"203.0.113.10"}); err != nil {
			return err
		}
		return answers(c.Addr("external"), "after.example.com.", dns.TypeA, []string{"203.0.113.10"})
	})
	t.Logf("reader re-created: the external view current after %v", time.Since(restored).Round(100*time.Millisecond))
}
