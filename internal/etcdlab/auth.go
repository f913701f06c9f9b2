package etcdlab

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/testpki"
	"github.com/globaladdr/globaladdr/plugin/pkg/etcdclient"

	clog "github.com/coredns/coredns/plugin/pkg/log"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RootPassword is the password of the root user of a Lab's etcd.
const RootPassword = "root-secret"

// Lab is a single etcd member of a release, as operators run it: TLS with
// client-certificate authentication, auth enabled, a root user, and the
// users a test adds.
type Lab struct {
	// CA signs the member's certificate and the clients'.
	CA *testpki.CA
	// Member is the etcd server.
	Member *Member
	// Client is a client certificate of CA (common name "coredns").
	Client testpki.Pair
	// Admin is a client logged in as root.
	Admin *etcdclient.Client
}

// StartLab starts bin as a Lab's member, with extra arguments, and enables
// auth.
func StartLab(t testing.TB, bin string, extra ...string) *Lab {
	t.Helper()
	ca := testpki.NewCA(t, "etcd")
	l := &Lab{CA: ca, Client: ca.Issue(t, "coredns")}
	l.Member = StartMember(t, bin, ca, ca.Issue(t, "server", net.IPv4(127, 0, 0, 1)), l.Client, extra...)
	cfg := l.Config("root", RootPassword)
	cli, err := etcdclient.New(cfg, clog.NewWithPlugin("etcdlab"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	l.Admin = cli
	EnableAuth(t, cli.Client)
	return l
}

// EnableAuth adds the root user with RootPassword and enables auth, through
// cli, a client of the cluster without credentials.
func EnableAuth(t testing.TB, cli *clientv3.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, step := range []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", RootPassword); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enabling auth on %v: %v", cli.Endpoints(), err)
		}
	}
}

// Config returns the connection to the lab's member as user, with the
// lab's client certificate.
func (l *Lab) Config(user, password string) etcdclient.Config {
	return etcdclient.Config{
		Endpoints: []string{l.Member.ClientURL},
		TLS:       l.Member.tls,
		Username:  user,
		Password:  password,
	}
}

// Perm is a permission of a role: on the keys with Prefix, read, and
// write too when Write is set.
type Perm struct {
	Prefix string
	Write  bool
}

// AddUser adds user with password and a role of its own, named after it,
// with perms.
func (l *Lab) AddUser(t testing.TB, user, password string, perms ...Perm) {
	t.Helper()
	AddUser(t, l.Admin.Client, user, password, perms...)
}

// AddUser adds user with password and a role of its own, named after it,
// with perms, through admin, a client logged in as root.
func AddUser(t testing.TB, admin *clientv3.Client, user, password string, perms ...Perm) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := admin.RoleAdd(ctx, user); err != nil {
		t.Fatalf("role %s: %v", user, err)
	}
	for _, p := range perms {
		typ := clientv3.PermissionType(clientv3.PermRead)
		if p.Write {
			typ = clientv3.PermissionType(clientv3.PermReadWrite)
		}
		if _, err := admin.RoleGrantPermission(ctx, user, p.Prefix, clientv3.GetPrefixRangeEnd(p.Prefix), typ); err != nil {
			t.Fatalf("role %s: %v", user, err)
		}
	}
	if _, err := admin.UserAdd(ctx, user, password); err != nil {
		t.Fatalf("user %s: %v", user, err)
	}
	if _, err := admin.UserGrantRole(ctx, user, user); err != nil {
		t.Fatalf("user %s: %v", user, err)
	}
}

// DeleteUser deletes user and its role.
func (l *Lab) DeleteUser(t testing.TB, user string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.Admin.UserDelete(ctx, user); err != nil {
		t.Fatalf("deleting user %s: %v", user, err)
	}
	if _, err := l.Admin.RoleDelete(ctx, user); err != nil {
		t.Fatalf("deleting role %s: %v", user, err)
	}
}
