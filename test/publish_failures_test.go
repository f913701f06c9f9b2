package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/internal/lockedbuf"
	"github.com/globaladdr/globaladdr/internal/nameserver"
	"github.com/globaladdr/globaladdr/plugin/publish/objects"

	"github.com/miekg/dns"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// publishCorefile is an external view of example.com on its etcd at ETCD,
// published through the API server of KUBECONFIG in namespace default,
// under a Lease of 3 s. PORT is its DNS port, LISTEN its other listeners.
const publishCorefile = `example.com:PORT {
    LISTEN
    publish {
        kubeconfig KUBECONFIG
        namespace default
        lease publish-test 3s
    }
    globaladdr ` + exampleGlobal + ` {
        ttl 900
    }
    etcdzone {
        ns ` + exampleNS + `
        endpoint ETCD
    }
    etcd example.com
}
`

// fillPublishCorefile returns publishCorefile on port, with the listeners
// listen, publishing through kubeconfig the records of l's etcd.
func fillPublishCorefile(l *publishLab, port, listen, kubeconfig string) string {
	return fillPublishTemplate(l, publishCorefile, port, listen, kubeconfig)
}

// fillPublishTemplate is fillPublishCorefile of corefile, publishCorefile
// changed.
func fillPublishTemplate(l *publishLab, corefile, port, listen, kubeconfig string) string {
	return strings.NewReplacer("PORT", port, "LISTEN", listen, "KUBECONFIG", kubeconfig, "ETCD", l.etcd.Endpoint()).Replace(corefile)
}

// publishCorefileFor fills publishCorefile for a CoreDNS in the test
// process: its DNS port {port:dns}, its ready listener {httpport:ready}.
func publishCorefileFor(l *publishLab, kubeconfig string) string {
	return fillPublishCorefile(l, "{port:dns}", "ready :{httpport:ready}", kubeconfig)
}

// publicA is an A record of name, a public address that the external view
// gives as it is, with a TTL of 60.
func publicA(name, addr string) externaldns.Record {
	r := a(name, addr)
	r.TTL = 60
	return r
}

// publicLine is publicA's endpoint, as endpointLines writes it.
func publicLine(name, addr string) string {
	return name + " A 60 " + addr
}

// objectNames returns the names of objs, sorted.
func objectNames(objs []publishedObject) []string {
	var names []string
	for _, o := range objs {
		names = append(names, o.Metadata.Name)
	}
	slices.Sort(names)
	return names
}

// checkObjectNames fails t unless the publication's objects are named
// want: none was added beside them, none lost.
func (l *publishLab) checkObjectNames(t *testing.T, what string, want []string) {
	t.Helper()
	if got := objectNames(l.objects(t)); !slices.Equal(got, want) {
		t.Errorf("%s: the objects are %v, were %v", what, got, want)
	}
}

// publishReplica is a replica of publishCorefile run as a process of
// ../coredns, as a Deployment's pod runs it.
type publishReplica struct {
	addr    string // host:port of its DNS listener
	metrics string // host:port of its prometheus listener
	log     string // the file of its output
	proc    *program
}

// startPublishReplica starts a replica listening on host and port, and
// waits until it answers for example.com.
func startPublishReplica(t *testing.T, l *publishLab, coredns, host, port string) *publishReplica {
	t.Helper()
	return startPublishReplicaOf(t, l, coredns, host, port, publishCorefile)
}

// startPublishReplicaOf is startPublishReplica of corefile, a
// publishCorefile with its placeholders.
func startPublishReplicaOf(t *testing.T, l *publishLab, coredns, host, port, corefile string) *publishReplica {
	t.Helper()
	r := &publishReplica{addr: net.JoinHostPort(host, port), metrics: nameserver.FreeLoopbackAddr(t)}
	dir := t.TempDir()
	corefile = fillPublishTemplate(l, corefile, port, "bind "+host+"\n    prometheus "+r.metrics, l.api.kubeconfig)
	path := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	name := "coredns-" + host
	r.log = filepath.Join(dir, name+".log")
	r.proc = startProgram(t, name, exec.Command(coredns, "-conf", path), dir)
	r.proc.awaitReady(t, 15*time.Second, func() error { return answersSOA(r.addr) })
	return r
}

// leader returns the replica's coredns_publish_leader.
func (r *publishReplica) leader(t *testing.T) float64 {
	t.Helper()
	return metricSum(scrape(t, "http://"+r.metrics+"/metrics"), "coredns_publish_leader", "")
}

// awaitFollows waits until the replica has seen another hold the Lease:
// it campaigns, and does not write.
func (r *publishReplica) awaitFollows(t *testing.T) {
	t.Helper()
	eventually(t, 30*time.Second, r.addr+" sees another replica write", func() error {
		out, err := os.ReadFile(r.log)
		if err != nil || !strings.Contains(string(out), "Lease publish-test: ") {
			return fmt.Errorf("its log names no other replica holding the Lease (%v)", err)
		}
		return nil
	})
}

// awaitWriter waits until exactly one of replicas says it holds the
// Lease, and returns it.
func awaitWriter(t *testing.T, replicas ...*publishReplica) *publishReplica {
	t.Helper()
	var writer *publishReplica
	eventually(t, 30*time.Second, "one replica writes", func() error {
		var leaders []string
		writer = nil
		for _, r := range replicas {
			if r.leader(t) == 1 {
				leaders = append(leaders, r.addr)
				writer = r
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("replicas holding the Lease: %v", leaders)
		}
		return nil
	})
	return writer
}

// TestPublishReplicas runs two replicas of one Corefile, as processes on
// the same port (each bound to its own loopback address), so that both
// would write the same objects: exactly one writes. Killed, the other
// takes over and publishes the next change into the same objects, with no
// duplicate object or endpoint. Stopped (SIGTERM, as Kubernetes stops a
// pod), a replica deletes nothing, and gives the Lease up.
func TestPublishReplicas(t *testing.T) {
	t.Parallel()
	coredns := builtCoreDNS(t)
	l := startPublishLab(t)
	putRecords(t, l.etcd, a("app."+exampleDomain, exampleInternal), publicA("pub."+exampleDomain, "198.51.100.7"))
	want := []string{"app." + exampleDomain + " A 900 " + exampleGlobal, publicLine("pub."+exampleDomain, "198.51.100.7")}

	_, port, _ := net.SplitHostPort(nameserver.FreeLoopbackAddr(t))
	replicas := []*publishReplica{
		startPublishReplica(t, l, coredns, "127.0.0.1", port),
		startPublishReplica(t, l, coredns, "127.0.0.2", port),
	}
	l.awaitPublished(t, want)
	writer := awaitWriter(t, replicas...)
	for _, r := range replicas {
		if r != writer {
			r.awaitFollows(t)
		}
	}
	if awaitWriter(t, replicas...) != writer {
		t.Error("the Lease changed hands with both replicas running")
	}
	names := objectNames(l.objects(t))

	writer.proc.signal(t, syscall.SIGKILL)
	killed := time.Now()
	putRecords(t, l.etcd, publicA("new."+exampleDomain, "198.51.100.8"))
	survivor := replicas[0]
	if survivor == writer {
		survivor = replicas[1]
	}
	awaitWriter(t, survivor)
	want = append(want, publicLine("new."+exampleDomain, "198.51.100.8"))
	l.awaitPublished(t, want)
	t.Logf("the other replica published %v after the writer was killed", time.Since(killed).Round(100*time.Millisecond))
	l.checkObjectNames(t, "after the writer was killed", names)

	survivor.proc.signal(t, syscall.SIGTERM)
	if got := endpointLines(l.objects(t)); !slices.Equal(got, want) {
		t.Errorf("after the last replica stopped, the objects hold\n%s\nnot\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	l.checkObjectNames(t, "after the last replica stopped", names)
	if holder := l.k.run(t, nil, "get", "lease", "publish-test", "-o", "jsonpath={.spec.holderIdentity}"); holder != "" {
		t.Errorf("the stopped replica did not give up the Lease: it is held by %q", holder)
	}
}

// TestPublishReplicasApart runs two replicas of one Corefile on different
// ports and addresses, with the default Lease, as a second Deployment on
// another port or a hostNetwork DaemonSet beside a Service's pods would:
// one writes, one set of objects holds each name once, and the objects
// 0.1.0 named for the port (globaladdr.ZONE.PORT.N) are deleted once the
// set is written, with the name only they held.
func TestPublishReplicasApart(t *testing.T) {
	t.Parallel()
	coredns := builtCoreDNS(t)
	l := startPublishLab(t)
	putRecords(t, l.etcd, a("app."+exampleDomain, exampleInternal), publicA("pub."+exampleDomain, "198.51.100.7"))
	old := `{"apiVersion":"externaldns.k8s.io/v1alpha1","kind":"DNSEndpoint","metadata":{"name":"globaladdr.example.com.53.0","namespace":"default",` +
		`"labels":{"app.kubernetes.io/managed-by":"globaladdr","globaladdr/zone":"example.com","globaladdr/block":"example.com-53"}},` +
		`"spec":{"endpoints":[{"dnsName":"stale.example.com","recordType":"A","targets":["198.51.100.99"],"recordTTL":60}]}}`
	l.k.run(t, []byte(old), "apply", "-f", "-")

	corefile := strings.Replace(publishCorefile, "        lease publish-test 3s\n", "", 1)
	if corefile == publishCorefile {
		t.Fatal("publishCorefile has no lease line to take out")
	}
	_, port1, _ := net.SplitHostPort(nameserver.FreeLoopbackAddr(t))
	_, port2, _ := net.SplitHostPort(nameserver.FreeLoopbackAddr(t))
	replicas := []*publishReplica{
		startPublishReplicaOf(t, l, coredns, "127.0.0.1", port1, corefile),
		startPublishReplicaOf(t, l, coredns, "127.0.0.3", port2, corefile),
	}
	want := []string{"app." + exampleDomain + " A 900 " + exampleGlobal, publicLine("pub."+exampleDomain, "198.51.100.7")}
	l.awaitPublished(t, want)
	writer := awaitWriter(t, replicas...)
	l.checkObjectNames(t, "two replicas apart", []string{"globaladdr.example.com.0"})
	if holder := l.k.run(t, nil, "get", "lease", "globaladdr.example.com", "-o", "jsonpath={.spec.holderIdentity}"); holder == "" {
		t.Error("the Lease globaladdr.example.com is not held")
	}
	deleteRecords(t, l.etcd, "pub."+exampleDomain)
	l.awaitPublished(t, want[:1])
	if awaitWriter(t, replicas...) != writer {
		t.Error("the Lease changed hands with both replicas running")
	}
	l.checkObjectNames(t, "after a deletion", []string{"globaladdr.example.com.0"})
}

// apiOutage is how long TestPublishAPIOutage keeps the API server down:
// long enough for the writer to lose the Lease (3 s) many times over.
const apiOutage = 30 * time.Second

// TestPublishAPIOutage stops the API server for apiOutage while records
// are added, deleted and changed in etcd, and reloads the Corefile: the
// view stays ready and answers the new records throughout, and once the API server is back the objects converge to the
// view, in the same objects, no name lost and none twice.
func TestPublishAPIOutage(t *testing.T) {
	t.Parallel()
	l := startPublishLab(t)
	putRecords(t, l.etcd,
		publicA("kept."+exampleDomain, "198.51.100.1"),
		publicA("gone."+exampleDomain, "198.51.100.2"),
		publicA("moved."+exampleDomain, "198.51.100.3"))
	corefile := publishCorefileFor(l, l.api.kubeconfig)
	c := startCoreDNS(t, corefile)
	waitServing(t, c.Addr("dns"))
	l.awaitPublished(t, []string{
		publicLine("kept."+exampleDomain, "198.51.100.1"),
		publicLine("gone."+exampleDomain, "198.51.100.2"),
		publicLine("moved."+exampleDomain, "198.51.100.3"),
	})
	names := objectNames(l.objects(t))

	l.api.stop(t)
	down := time.Now()
	// A reload while the API server is down: the new instance is ready,
	// as the one it replaces was.
	c.Reload(t, corefile)
	if status := readyStatus(t, c.Addr("ready")); status != http.StatusOK {
		t.Errorf("/ready after a reload during the outage: %d, want 200", status)
	}
	putRecords(t, l.etcd, publicA("added."+exampleDomain, "198.51.100.4"))
	deleteRecords(t, l.etcd, "gone."+exampleDomain, "moved."+exampleDomain)
	putRecords(t, l.etcd, publicA("moved."+exampleDomain, "198.51.100.5"))
	for _, want := range []struct{ name, addr string }{
		{"kept", "198.51.100.1"}, {"added", "198.51.100.4"}, {"gone", ""}, {"moved", "198.51.100.5"},
	} {
		var addrs []string
		if want.addr != "" {
			addrs = []string{want.addr}
		}
		name := want.name + "." + exampleDomain + "."
		eventually(t, 10*time.Second, "the view answers "+name+" while the API server is down", func() error {
			return answers(c.Addr("dns"), name, dns.TypeA, addrs)
		})
	}
	// The view keeps answering through the outage.
	for time.Since(down) < apiOutage {
		eventually(t, 5*time.Second, "the view answers while the API server is down", func() error {
			return answers(c.Addr("dns"), "added."+exampleDomain+".", dns.TypeA, []string{"198.51.100.4"})
		})
		time.Sleep(2 * time.Second)
	}

	l.api.start(t)
	up := time.Now()
	l.awaitPublished(t, []string{
		publicLine("kept."+exampleDomain, "198.51.100.1"),
		publicLine("added."+exampleDomain, "198.51.100.4"),
		publicLine("moved."+exampleDomain, "198.51.100.5"),
	})
	t.Logf("the objects converged %v after the API server was back", time.Since(up).Round(100*time.Millisecond))
	l.checkObjectNames(t, "after the outage", names)
}

// TestPublishNotReady starts a publication on an API server that does not
// have the DNSEndpoint CRD, with an account that RBAC grants nothing, and
// on an API server that does not answer: each is not ready, and logs the
// cause in words. The first is ready, and publishes, once the CRD is
// installed, with no restart. A kubeconfig that is not there stops
// start-up, naming the plugin and the Corefile's line.
func TestPublishNotReady(t *testing.T) {
	l := startPublishLabWithoutCRD(t)
	putRecords(t, l.etcd, publicA("pub."+exampleDomain, "198.51.100.7"))
	dir := t.TempDir()
	userConfig := filepath.Join(dir, "user.kubeconfig")
	writeKubeconfig(t, userConfig, l.api.url, l.api.secrets.caPEM, "user", l.api.secrets.userToken)
	closed, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	deadConfig := filepath.Join(dir, "dead.kubeconfig")
	writeKubeconfig(t, deadConfig, "https://127.0.0.1:"+strconv.Itoa(closed), l.api.secrets.caPEM, "admin", l.api.secrets.token)

	t.Run("no CRD", func(t *testing.T) {
		logs, c := awaitNotReady(t, publishCorefileFor(l, l.api.kubeconfig), objects.ErrNoCRD.Error())
		l.installCRD(t)
		waitReady(t, "http://"+c.Addr("ready")+"/ready")
		l.awaitPublished(t, []string{publicLine("pub."+exampleDomain, "198.51.100.7")})
		if n := strings.Count(logs.String(), objects.ErrNoCRD.Error()); n != 1 {
			t.Errorf("the missing CRD was logged %d times, want once", n)
		}
	})
	t.Run("no RBAC", func(t *testing.T) {
		awaitNotReady(t, publishCorefileFor(l, userConfig), "missing RBAC: this account may not "+
			"get, list, create, update, delete dnsendpoints.externaldns.k8s.io; get, create, update leases.coordination.k8s.io in namespace default")
	})
	t.Run("no namespace", func(t *testing.T) {
		corefile := strings.Replace(publishCorefileFor(l, l.api.kubeconfig), "namespace default", "namespace nowhere", 1)
		awaitNotReady(t, corefile, objects.ErrNoNamespace.Error()+": create namespace nowhere")
		if got := l.k.run(t, nil, "get", "leases", "-A", "-o", "name"); strings.Contains(got, "globaladdr-check") {
			t.Errorf("the namespace's check left a Lease: %s", got)
		}
	})
	t.Run("the chart's Role", func(t *testing.T) {
		// Exactly what the chart grants (TestHelmPublishNamespace holds
		// publishRules to it) is enough to write, take over and give up.
		grantPublishRules(t, l, "user")
		c := startCoreDNS(t, publishCorefileFor(l, userConfig))
		waitReady(t, "http://"+c.Addr("ready")+"/ready")
		putRecords(t, l.etcd, publicA("more."+exampleDomain, "198.51.100.8"))
		l.awaitPublished(t, []string{publicLine("more."+exampleDomain, "198.51.100.8"), publicLine("pub."+exampleDomain, "198.51.100.7")})
		deleteRecords(t, l.etcd, "more."+exampleDomain)
		l.awaitPublished(t, []string{publicLine("pub."+exampleDomain, "198.51.100.7")})
	})
	t.Run("API server unreachable", func(t *testing.T) {
		awaitNotReady(t, publishCorefileFor(l, deadConfig), "the API server does not answer")
	})
	t.Run("no kubeconfig", func(t *testing.T) {
		corefile := publishCorefileFor(l, "/nonexistent")
		_, err := tryStartCoreDNS(t, corefile)
		line := slices.IndexFunc(strings.Split(corefile, "\n"), func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "publish ") }) + 1
		for _, want := range []string{"plugin/publish", fmt.Sprintf("Corefile:%d", line), "/nonexistent"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("start-up: %v, want an error saying %q", err, want)
			}
		}
	})
	t.Run("a zone etcdzone does not serve", func(t *testing.T) {
		corefile := strings.Replace(publishCorefileFor(l, l.api.kubeconfig), "    publish {", "    publish sub.example.com {", 1)
		_, err := tryStartCoreDNS(t, corefile)
		line := slices.IndexFunc(strings.Split(corefile, "\n"), func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "publish ") }) + 1
		for _, want := range []string{"plugin/publish", fmt.Sprintf("Corefile:%d", line), "zone sub.example.com.: etcdzone serves example.com., not it"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("start-up: %v, want an error saying %q", err, want)
			}
		}
	})
	t.Run("no globaladdr", func(t *testing.T) {
		// A LAN view published would send its internal addresses out.
		corefile := regexp.MustCompile(`(?s)\n\s*globaladdr [^}]*}`).ReplaceAllString(publishCorefileFor(l, l.api.kubeconfig), "")
		if strings.Contains(corefile, "globaladdr ") {
			t.Fatalf("the Corefile still has globaladdr:\n%s", corefile)
		}
		if _, err := tryStartCoreDNS(t, corefile); err == nil || !strings.Contains(err.Error(), "no globaladdr in this server block") {
			t.Errorf("start-up without globaladdr: %v", err)
		}
	})
}

// awaitNotReady starts CoreDNS from corefile, waits until its log says
// want, and checks that its ready listener does not answer 200 OK. It
// returns the log and the server.
func awaitNotReady(t *testing.T, corefile, want string) (*lockedbuf.Buffer, *coreDNS) {
	t.Helper()
	logs := captureLog(t)
	c := startCoreDNS(t, corefile)
	eventually(t, 30*time.Second, "a log line saying "+want, func() error {
		if !strings.Contains(logs.String(), want) {
			return io.EOF
		}
		return nil
	})
	resp, err := http.Get("http://" + c.Addr("ready") + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK || !strings.Contains(string(body), "publish") {
		t.Errorf("/ready: %s %s, want 503 naming publish", resp.Status, body)
	}
	return logs, c
}

// grantPublishRules binds a Role of publishRules in namespace default to
// user.
func grantPublishRules(t *testing.T, l *publishLab, user string) {
	t.Helper()
	role := rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "publish", Namespace: "default"},
		Rules:      publishRules,
	}
	binding := rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "publish", Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "publish"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, obj := range []any{role, binding} {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		l.k.run(t, b, "apply", "-f", "-")
	}
}

// TestPublishWaitsForTheView starts a publication whose view maps the LAN's
// IPv6 prefix to one learned from an etcd key that is not written yet: the
// zone loads without that prefix's records, and publish writes nothing,
// which would delete them at the provider, until the prefix is known; then
// it publishes them translated. Not parallel: it reads the process's log.
func TestPublishWaitsForTheView(t *testing.T) {
	l := startPublishLab(t)
	v6 := aaaa("v6."+exampleDomain, "fd00:0:0:1::51")
	v6.TTL = 60
	putRecords(t, l.etcd, publicA("pub."+exampleDomain, "198.51.100.7"), v6)
	corefile := strings.Replace(publishCorefileFor(l, l.api.kubeconfig),
		"        ttl 900\n", "        ttl 900\n        map fd00:0:0:1::/64 from etcd /uplink/prefix\n", 1)
	if !strings.Contains(corefile, "map fd00") {
		t.Fatalf("no map in the Corefile:\n%s", corefile)
	}
	logs := captureLog(t)
	startCoreDNS(t, corefile)
	const waiting = "waiting for the external view's global addresses and map prefixes before campaigning for Lease publish-test"
	eventually(t, 30*time.Second, "a log line saying "+waiting, func() error {
		if !strings.Contains(logs.String(), waiting) {
			return io.EOF
		}
		return nil
	})
	if objs := l.objects(t); len(objs) > 0 {
		t.Fatalf("published before the view knew its prefix:\n%s", strings.Join(endpointLines(objs), "\n"))
	}
	putKeys(t, l.etcd, map[string]string{"/uplink/prefix": "2001:db8:aa:1::/64"})
	l.awaitPublished(t, []string{publicLine("pub."+exampleDomain, "198.51.100.7"), "v6." + exampleDomain + " AAAA 900 2001:db8:aa:1::51"})
}
