package test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin/test"
	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/externaldns"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/miekg/dns"
)

// troubleTimeout is the clients' timeout in the etcd trouble tests. The etcd
// plugin gives etcd 5 s (its etcdTimeout) before it answers SERVFAIL; a
// client that waits that long must get an answer.
const troubleTimeout = 8 * time.Second

// troubleDeadline bounds each phase of the trouble tests.
const troubleDeadline = 90 * time.Second

// troubleQuestions are what the clients of the trouble tests ask in turn.
var troubleQuestions = []dns.Question{
	{Name: "app.example.com.", Qtype: dns.TypeA, Qclass: dns.ClassINET},
	{Name: "app.example.com.", Qtype: dns.TypeAAAA, Qclass: dns.ClassINET},
	{Name: "example.com.", Qtype: dns.TypeSRV, Qclass: dns.ClassINET},
	{Name: "example.com.", Qtype: dns.TypeTXT, Qclass: dns.ClassINET},
}

// troubleRecords is what etcd holds in the trouble tests.
var troubleRecords = []externaldns.Record{
	a("app.example.com", "192.168.0.51"),
	aaaa("app.example.com", "fd00::51"),
	a("x.secret.example.com", "192.168.0.70"),
}

// outcome is one query of a trouble test's traffic and what came of it.
type outcome struct {
	network string
	q       dns.Question
	sent    time.Time
	reply   *dns.Msg
	err     error
}

// traffic sends troubleQuestions to addr over every network, one client per
// network, query after query, until stop is closed, and hands every outcome
// to the returned channel, which is closed when the clients are done.
func traffic(addr string, stop <-chan struct{}) <-chan outcome {
	out := make(chan outcome)
	var wg sync.WaitGroup
	for _, network := range networks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &dns.Client{Net: network, Timeout: troubleTimeout}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m := new(dns.Msg)
				m.Question = []dns.Question{troubleQuestions[i%len(troubleQuestions)]}
				m.Id, m.RecursionDesired = dns.Id(), true
				o := outcome{network: network, q: m.Question[0], sent: time.Now()}
				o.reply, _, o.err = c.Exchange(m, addr)
				out <- o
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

// checkOutcome fails t unless o got, in time, NOERROR or SERVFAIL with
// nothing the external view must not show.
func checkOutcome(t *testing.T, o outcome) {
	t.Helper()
	if o.err != nil {
		t.Errorf("%s %s over %s: no answer within %s: %v", o.q.Name, dns.TypeToString[o.q.Qtype], o.network, troubleTimeout, o.err)
		return
	}
	checkLeak(t, viewPolicies["external"], "external", o.q, o.reply)
	if rc := o.reply.Rcode; rc != dns.RcodeSuccess && rc != dns.RcodeServerFailure {
		t.Errorf("%s %s over %s: %s", o.q.Name, dns.TypeToString[o.q.Qtype], o.network, dns.RcodeToString[rc])
	}
}

// TestEtcdOutage stops etcd while clients query the external view over UDP
// and TCP, and starts it again: every query gets an answer within the
// client's timeout, SERVFAIL while etcd is away (never an internal address),
// and answers come back by themselves once etcd is back.
func TestEtcdOutage(t *testing.T) {
	t.Parallel()
	c, etcd := startViews(t, directives{}, troubleRecords...)
	stop := make(chan struct{})
	outcomes := traffic(c.Addr("external"), stop)
	defer func() {
		close(stop)
		for o := range outcomes {
			checkOutcome(t, o)
		}
	}()

	var stopped, restarted time.Time
	phases := []struct {
		name string
		// done reports whether o, from network, ends the phase for it.
		done func(o outcome) bool
		// then runs when every network ended the phase.
		then func()
	}{
		{"serving", func(o outcome) bool { return rcode(o) == dns.RcodeSuccess }, func() {
			etcd.Stop()
			stopped = time.Now()
		}},
		{"SERVFAIL while etcd is stopped", func(o outcome) bool {
			return o.sent.After(stopped) && rcode(o) == dns.RcodeServerFailure
		}, func() {
			if err := etcd.Restart(); err != nil {
				t.Fatal(err)
			}
			restarted = time.Now()
		}},
		{"serving again after etcd is back", func(o outcome) bool {
			return o.sent.After(restarted) && rcode(o) == dns.RcodeSuccess
		}, func() {}},
	}
	deadline := time.After(troubleDeadline)
	for _, phase := range phases {
		pending := map[string]bool{}
		for _, n := range networks {
			pending[n] = true
		}
		for len(pending) > 0 {
			select {
			case o := <-outcomes:
				checkOutcome(t, o)
				if phase.done(o) {
					delete(pending, o.network)
				}
			case <-deadline:
				t.Fatalf("phase %q not reached within %s over %v", phase.name, troubleDeadline, pending)
			}
		}
		t.Logf("%s: reached", phase.name)
		phase.then()
	}
}

// rcode returns the rcode of o's reply, or -1 when it got none.
func rcode(o outcome) int {
	if o.reply == nil {
		return -1
	}
	return o.reply.Rcode
}

// TestEtcdClusterMemberDown serves the external view from a 3-member etcd
// cluster and stops its leader: every query is still answered correctly,
// and a record written afterwards is served.
func TestEtcdClusterMemberDown(t *testing.T) {
	t.Parallel()
	cluster := startEtcdCluster(t, 3)
	ctx := context.Background()
	for _, r := range troubleRecords {
		if err := externaldns.Put(ctx, cluster.client, "", r); err != nil {
			t.Fatal(err)
		}
	}
	c := startCoreDNS(t, viewsCorefileFor(strings.Join(cluster.endpoints, " "), directives{}))
	app := test.Case{Qname: "app.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("app.example.com. 900 IN A 203.0.113.10")}}
	checkCase(t, c.Addr("external"), app)

	cluster.stopLeader(t)
	for _, q := range troubleQuestions {
		for range 5 {
			for _, network := range networks {
				o := outcome{network: network, q: q}
				m := &dns.Msg{Question: []dns.Question{q}}
				m.Id = dns.Id()
				o.reply, _, o.err = (&dns.Client{Net: network, Timeout: troubleTimeout}).Exchange(m, c.Addr("external"))
				checkOutcome(t, o)
				if rcode(o) != dns.RcodeSuccess {
					t.Errorf("%s %s over %s with a member down: %v", q.Name, dns.TypeToString[q.Qtype], network, o.reply)
				}
			}
		}
	}
	checkCase(t, c.Addr("external"), app)
	if err := externaldns.Put(ctx, cluster.client, "", a("new.example.com", "192.168.0.52")); err != nil {
		t.Fatalf("write with a member down: %v", err)
	}
	checkCase(t, c.Addr("external"), test.Case{Qname: "new.example.com.", Qtype: dns.TypeA, Answer: []dns.RR{test.A("new.example.com. 900 IN A 203.0.113.10")}})
}

// etcdCluster is an embedded etcd cluster whose members all run in the test
// process, on loopback ports that were free.
type etcdCluster struct {
	members   []*embed.Etcd
	endpoints []string
	client    *clientv3.Client
}

// startEtcdCluster starts a cluster of n members, waits until it serves and
// closes it when t ends.
func startEtcdCluster(t *testing.T, n int) *etcdCluster {
	t.Helper()
	var clientURLs, peerURLs []url.URL
	var initial []string
	for i := range n {
		cp, err := corednstest.FreeTCPPort()
		if err != nil {
			t.Fatal(err)
		}
		pp, err := corednstest.FreeTCPPort()
		if err != nil {
			t.Fatal(err)
		}
		clientURLs = append(clientURLs, url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cp)})
		peerURLs = append(peerURLs, url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", pp)})
		initial = append(initial, fmt.Sprintf("m%d=%s", i, peerURLs[i].String()))
	}
	cl := &etcdCluster{}
	t.Cleanup(cl.close)
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = t.TempDir()
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = clientURLs[i:i+1], clientURLs[i:i+1]
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = peerURLs[i:i+1], peerURLs[i:i+1]
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "globaladdr-test"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.UnsafeNoFsync = true
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			t.Fatalf("etcd member %d: %v", i, err)
		}
		cl.members = append(cl.members, e)
		cl.endpoints = append(cl.endpoints, clientURLs[i].String())
	}
	for i, e := range cl.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			t.Fatalf("etcd member %d: %v", i, err)
		case <-time.After(troubleDeadline):
			t.Fatalf("etcd member %d not ready within %s", i, troubleDeadline)
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cl.endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	cl.client = cli
	return cl
}

// stopLeader stops the member that leads the cluster.
func (cl *etcdCluster) stopLeader(t *testing.T) {
	t.Helper()
	for i, e := range cl.members {
		if e != nil && e.Server.Leader() == e.Server.MemberID() {
			e.Close()
			cl.members[i] = nil
			t.Logf("stopped the leader, member %d", i)
			return
		}
	}
	t.Fatal("no member leads the cluster")
}

func (cl *etcdCluster) close() {
	if cl.client != nil {
		cl.client.Close()
	}
	for _, e := range cl.members {
		if e != nil {
			e.Close()
		}
	}
}
