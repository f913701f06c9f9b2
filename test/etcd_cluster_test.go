package test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/prereq"
	"github.com/globaladdr/globaladdr/internal/testpki"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// clusterLab is a three-member etcd cluster and two replicas of
// external.Corefile (./coredns), each in a network namespace of its own. The
// members take TLS client certificates of ca and enforce auth; the replicas
// log in as clusterUser, who may only read /skydns/, and the lab writes as
// root (its client certificate's common name).
type clusterLab struct {
	net      *etcdlab.Net
	etcdBin  string
	ca       *testpki.CA
	tls      *tls.Config
	members  []clusterMember
	replicas []*clusterReplica
	admin    *clientv3.Client
	dataDir  string
	// owner is the test the lab lives as long as: a member restarted in a
	// subtest outlives it.
	owner *testing.T
}

// clusterMember is a member of the lab's cluster.
type clusterMember struct {
	ns, addr string
	cert     testpki.Pair
	proc     *etcdlab.Process
}

// clusterUser and clusterPassword are the replicas' etcd user, who may only
// read /skydns/.
const clusterUser, clusterPassword = "coredns", "coredns-secret"

// clusterReplica is a CoreDNS of the lab.
type clusterReplica struct {
	ns, addr string
	proc     *etcdlab.Process
}

// endpoints are the members' client URLs, separated by spaces, as
// ETCD_ENDPOINT takes them.
func (l *clusterLab) endpoints() []string {
	var eps []string
	for _, m := range l.members {
		eps = append(eps, "https://"+m.addr+":2379")
	}
	return eps
}

// startMember starts member i (again, with its data), until the lab's test
// ends.
func (l *clusterLab) startMember(i int) {
	m := &l.members[i]
	var cluster []string
	for j, o := range l.members {
		cluster = append(cluster, fmt.Sprintf("m%d=http://%s:2380", j, o.addr))
	}
	m.proc = etcdlab.Run(l.owner, m.ns, nil, l.etcdBin,
		"--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(l.dataDir, fmt.Sprintf("m%d", i)),
		"--listen-client-urls", "https://"+m.addr+":2379", "--advertise-client-urls", "https://"+m.addr+":2379",
		"--cert-file", m.cert.CertFile, "--key-file", m.cert.KeyFile, "--trusted-ca-file", l.ca.CertFile, "--client-cert-auth",
		"--listen-peer-urls", "http://"+m.addr+":2380", "--initial-advertise-peer-urls", "http://"+m.addr+":2380",
		"--initial-cluster", strings.Join(cluster, ","), "--initial-cluster-state", "new",
		"--heartbeat-interval", "100", "--election-timeout", "1000", "--log-level", "warn")
}

// startClusterLab starts the cluster and the replicas of external.Corefile,
// the second with corefile's changes, and waits until both answer.
func startClusterLab(t *testing.T, second func(string) string) *clusterLab {
	t.Helper()
	prereq.Root(t, "network namespaces")
	prereq.Program(t, "ip", "iproute2")
	prereq.Program(t, "nft", "nftables")
	coredns := builtCoreDNS(t)
	ca := testpki.NewCA(t, "etcd")
	l := &clusterLab{
		net: etcdlab.NewNet(t), etcdBin: prereq.Program(t, "etcd", "etcd-server"), dataDir: t.TempDir(), owner: t,
		ca: ca, tls: etcdlab.ClientTLS(t, ca, ca.Issue(t, "root")),
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, m := range l.members {
			if out := m.proc.Output(); len(out) > 3000 {
				t.Logf("member %d:\n...%s", i, out[len(out)-3000:])
			} else {
				t.Logf("member %d:\n%s", i, out)
			}
		}
	})
	for i := range 3 {
		ns, addr := l.net.Node(t)
		l.members = append(l.members, clusterMember{ns: ns, addr: addr, cert: ca.Issue(t, fmt.Sprintf("m%d", i), net.ParseIP(addr))})
	}
	for i := range l.members {
		l.startMember(i)
	}
	var err error
	l.admin, err = clientv3.New(clientv3.Config{Endpoints: l.endpoints(), TLS: l.tls, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.admin.Close() })
	etcdlab.EnableAuth(t, l.admin)
	etcdlab.AddUser(t, l.admin, clusterUser, clusterPassword, etcdlab.Perm{Prefix: "/skydns/"})
	replicaCert := ca.Issue(t, clusterUser)
	l.put(t, nil, a("app.example.com", exampleInternal))

	example := readExample(t, "external.Corefile")
	for i, corefile := range []string{example, second(example)} {
		ns, addr := l.net.Node(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "Corefile")
		if err := os.WriteFile(path, []byte(corefile), 0o600); err != nil {
			t.Fatal(err)
		}
		env := []string{
			"DOMAIN=" + exampleDomain, "DNS_PORT=53", "HEALTH_PORT=8080", "READY_PORT=8181", "METRICS_PORT=9153",
			"GLOBAL_ADDR=" + exampleGlobal, "NS=" + exampleNS, "ETCD_ENDPOINT=" + strings.Join(l.endpoints(), " "),
			"ETCD_CERT=" + replicaCert.CertFile, "ETCD_KEY=" + replicaCert.KeyFile, "ETCD_CA=" + ca.CertFile,
			"ETCD_USERNAME=" + clusterUser, "ETCD_PASSWORD=" + clusterPassword,
		}
		r := &clusterReplica{ns: ns, addr: addr, proc: etcdlab.Run(t, ns, env, coredns, "-conf", path)}
		l.replicas = append(l.replicas, r)
		eventually(t, time.Minute, fmt.Sprintf("replica %d", i), func() error { return r.answers("app.example.com.", exampleGlobal) })
	}
	return l
}

// put writes records into the cluster, as external-dns does, through the
// members via (all when none).
func (l *clusterLab) put(t *testing.T, via []int, records ...externaldns.Record) {
	t.Helper()
	cli := l.admin
	if via == nil {
		via = []int{0, 1, 2}
	}
	if via != nil {
		var eps []string
		for _, i := range via {
			eps = append(eps, l.endpoints()[i])
		}
		c, err := clientv3.New(clientv3.Config{Endpoints: eps, TLS: l.tls, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cli = c
	}
	eventually(t, 30*time.Second, "writing to the cluster", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, r := range records {
			if err := externaldns.Put(ctx, cli, "/skydns", r); err != nil {
				return err
			}
		}
		return nil
	})
}

// remove deletes names from the cluster, as external-dns does.
func (l *clusterLab) remove(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range names {
		if err := externaldns.Delete(ctx, l.admin, "/skydns", name); err != nil {
			t.Fatal(err)
		}
	}
}

// answers returns nil when the replica answers name's A query with want
// (none: NXDOMAIN), over TCP (which rrl never limits).
func (r *clusterReplica) answers(name string, want ...string) error {
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	reply, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, net.JoinHostPort(r.addr, "53"))
	switch {
	case err != nil:
		return err
	case len(want) == 0 && reply.Rcode == dns.RcodeNameError:
		return nil
	case reply.Rcode != dns.RcodeSuccess || len(reply.Answer) != len(want):
		return fmt.Errorf("%s: %s %v, want %v", name, dns.RcodeToString[reply.Rcode], reply.Answer, want)
	}
	for i, rr := range reply.Answer {
		if a, ok := rr.(*dns.A); !ok || a.A.String() != want[i] {
			return fmt.Errorf("%s: %v, want %v", name, reply.Answer, want)
		}
	}
	return nil
}

// both waits until both replicas answer name with want, and returns how long
// that took.
func (l *clusterLab) both(t *testing.T, within time.Duration, name string, want ...string) time.Duration {
	t.Helper()
	began := time.Now()
	for i, r := range l.replicas {
		eventually(t, within, fmt.Sprintf("replica %d answers %s %v", i, name, want), func() error { return r.answers(name, want...) })
	}
	return time.Since(began)
}

// leader returns the index of the cluster's leader.
func (l *clusterLab) leader(t *testing.T) int {
	t.Helper()
	for i, ep := range l.endpoints() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		s, err := l.admin.Status(ctx, ep)
		cancel()
		if err == nil && s.Header.MemberId == s.Leader {
			return i
		}
	}
	t.Fatal("no leader")
	return -1
}

// metric scrapes the replica's metric for the zone.
func (r *clusterReplica) metric(t *testing.T, metric string) float64 {
	t.Helper()
	body := scrape(t, "http://"+net.JoinHostPort(r.addr, "9153")+"/metrics")
	v, _ := zoneMetric(body, metric, 53)
	return v
}

// ready returns the replica's /ready status.
func (r *clusterReplica) ready(t *testing.T) int {
	t.Helper()
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get("http://" + net.JoinHostPort(r.addr, "8181") + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// memberAddrs returns the members' addresses.
func (l *clusterLab) memberAddrs() []string {
	var addrs []string
	for _, m := range l.members {
		addrs = append(addrs, m.addr)
	}
	return addrs
}

// TestEtcdCluster runs two replicas of external.Corefile on a three-member
// cluster in network namespaces, with TLS client certificates and auth (the
// replicas read as a user who may only read /skydns/), through the cluster's faults: the leader
// killed, a member partitioned from its peers, every member down, and every
// link of a replica cut for 30 s (the replica says so within 15 s: a
// warning, the metric, the alert's expression; it answers from memory; it
// catches up after). The second replica has a short SOA expire (20 s): cut
// off for longer, it answers SERVFAIL and is not ready, until it is back.
func TestEtcdCluster(t *testing.T) {
	t.Parallel()
	l := startClusterLab(t, func(corefile string) string {
		return strings.Replace(corefile, "ns {$NS}", "ns {$NS}\n        expire 20", 1)
	})

	t.Run("the replicas' user only reads", func(t *testing.T) {
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: l.endpoints(), TLS: l.tls, Username: clusterUser, Password: clusterPassword,
			DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := cli.Get(ctx, "/skydns/", clientv3.WithPrefix()); err != nil {
			t.Errorf("reading /skydns/ as %s: %v", clusterUser, err)
		}
		if _, err := cli.Put(ctx, "/skydns/com/example/denied", "{}"); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("writing /skydns/ as %s: %v, want permission denied", clusterUser, err)
		}
	})

	t.Run("leader killed", func(t *testing.T) {
		i := l.leader(t)
		l.members[i].proc.Kill()
		l.put(t, nil, a("leader.example.com", "192.168.0.60"))
		t.Logf("new record on both replicas after %v", l.both(t, 15*time.Second, "leader.example.com.", exampleGlobal))
		l.startMember(i)
	})

	t.Run("member partitioned", func(t *testing.T) {
		m := l.members[0]
		var peers []string
		for _, o := range l.members[1:] {
			peers = append(peers, o.addr)
		}
		etcdlab.Cut(t, m.ns, peers)
		defer etcdlab.Heal(t, m.ns)
		l.put(t, []int{1, 2}, a("partition.example.com", "192.168.0.61"))
		t.Logf("new record on both replicas after %v", l.both(t, 15*time.Second, "partition.example.com.", exampleGlobal))
	})

	t.Run("all members down", func(t *testing.T) {
		for _, m := range l.members {
			m.proc.Kill()
		}
		began := time.Now()
		for time.Since(began) < 10*time.Second {
			for i, r := range l.replicas {
				if err := r.answers("app.example.com.", exampleGlobal); err != nil {
					t.Fatalf("replica %d, every member down: %v", i, err)
				}
			}
			time.Sleep(500 * time.Millisecond) // the queries' pace while the members are down
		}
		for i := range l.members {
			l.startMember(i)
		}
		l.put(t, nil, a("back.example.com", "192.168.0.62"))
		t.Logf("new record on both replicas after %v", l.both(t, 30*time.Second, "back.example.com.", exampleGlobal))
	})

	t.Run("replica cut off", func(t *testing.T) {
		r := l.replicas[0]
		errorsBefore := r.metric(t, "coredns_etcdzone_etcd_errors_total")
		mark := len(r.proc.Output())
		etcdlab.Cut(t, r.ns, l.memberAddrs())
		healed := false
		defer func() {
			if !healed {
				etcdlab.Heal(t, r.ns)
			}
		}()
		began := time.Now()
		l.put(t, nil, a("during.example.com", "192.168.0.63"))
		l.remove(t, "back.example.com")
		eventually(t, cutOffWithin, "the warning, the metric and the alert's expression", func() error {
			switch silence := r.metric(t, "coredns_etcdzone_etcd_silence_seconds"); {
			case !strings.Contains(r.proc.Output()[mark:], "not heard from for"):
				return fmt.Errorf("no warning yet")
			case silence <= 10: // EtcdzoneEtcdCutOff's expression
				return fmt.Errorf("coredns_etcdzone_etcd_silence_seconds %v", silence)
			case r.metric(t, "coredns_etcdzone_etcd_errors_total") <= errorsBefore:
				return fmt.Errorf("coredns_etcdzone_etcd_errors_total did not grow")
			}
			return nil
		})
		t.Logf("told after %v", time.Since(began).Round(100*time.Millisecond))
		if err := r.answers("back.example.com.", exampleGlobal); err != nil {
			t.Errorf("cut off: %v, want the answer from memory", err)
		}
		time.Sleep(30*time.Second - time.Since(began)) // the cut lasts 30 s
		etcdlab.Heal(t, r.ns)
		healed = true
		back := time.Now()
		eventually(t, 15*time.Second, "catching up", func() error {
			if err := r.answers("during.example.com.", exampleGlobal); err != nil {
				return err
			}
			return r.answers("back.example.com.")
		})
		t.Logf("caught up %v after the links came back", time.Since(back).Round(100*time.Millisecond))
	})

	t.Run("expire", func(t *testing.T) {
		r := l.replicas[1]
		etcdlab.Cut(t, r.ns, l.memberAddrs())
		healed := false
		defer func() {
			if !healed {
				etcdlab.Heal(t, r.ns)
			}
		}()
		eventually(t, 30*time.Second, "SERVFAIL after the expire (20 s)", func() error {
			m := new(dns.Msg)
			m.SetQuestion("app.example.com.", dns.TypeA)
			reply, _, err := (&dns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, net.JoinHostPort(r.addr, "53"))
			if err != nil || reply.Rcode != dns.RcodeServerFailure {
				return fmt.Errorf("%v %v", reply, err)
			}
			return nil
		})
		if s := r.ready(t); s != http.StatusServiceUnavailable {
			t.Errorf("past the expire: /ready %d, want 503", s)
		}
		etcdlab.Heal(t, r.ns)
		healed = true
		eventually(t, 15*time.Second, "answering again", func() error { return r.answers("during.example.com.", exampleGlobal) })
		if s := r.ready(t); s != http.StatusOK {
			t.Errorf("back: /ready %d, want 200", s)
		}
	})
}
