package test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdlab"
	"github.com/globaladdr/globaladdr/internal/netlab"
	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestHelmBundledEtcd runs the release's own etcd as the chart renders it
// (bundled-etcd-values.yaml with three members): each member is the etcd
// release of the chart's image tag (make etcd-bins), started with the
// StatefulSet's command, arguments and files (its Secrets' certificates) in
// a network namespace of its own, under the name its headless Service gives
// it. The hook Job's script runs as the Job runs it, twice; then CoreDNS,
// from the Corefile the chart renders for the DNS pods, answers what the
// webhook sidecar's user wrote, logged in as the reader, which etcd refuses
// a write. With a member killed, then the leader, writes and answers go on;
// with every member restarted, nothing is lost. The defragmentation
// CronJob runs as rendered; the webhook sidecar, as external-dns's chart
// runs it with our values beside the release, writes what external-dns
// sends as the writer; the backup CronJob's script saves a snapshot, and
// keeps the newest. A new cluster restored from the newest (the members'
// restore init container as rendered) serves every record again.
func TestHelmBundledEtcd(t *testing.T) {
	if !netlab.Enter(t) {
		return
	}
	etcdBin := builtEtcd("3.6")(t)
	tools := newJobTools(t)
	r := renderRelease(t, filepath.Join(chartDir, "ci", "bundled-etcd-values.yaml"), writeValues(t, "etcd: {cluster: {members: 3}}"))
	name := helmRelease + "-etcd"
	sts := r.etcd.statefulSets[name]
	checkChartEtcdRelease(t, sts)
	k := cluster{secrets: map[string]map[string]string{}, configMaps: map[string]map[string]string{}}
	for n, s := range r.etcd.secrets {
		k.secrets[n] = map[string]string{}
		for key, v := range s.Data {
			k.secrets[n][key] = string(v)
		}
	}
	for n, cm := range r.configMaps {
		k.configMaps[n] = cm.Data
	}

	lab := etcdlab.NewNet(t)
	members := make(etcdMembers, *sts.Spec.Replicas)
	hosts := map[string]string{}
	for i := range members {
		m := &members[i]
		m.pod = fmt.Sprintf("%s-%d", name, i)
		m.ns, m.addr = lab.Node(t)
		m.data = t.TempDir()
		host := fmt.Sprintf("%s.%s-peer.default.svc", m.pod, name)
		hosts[host] = m.addr
		m.url = "https://" + host + ":2379"
	}
	hosts[name+".default.svc"] = members[0].addr // the client Service, here one member's
	netlab.Hosts(t, hosts)
	for i := range members {
		members[i].start(t, etcdBin, sts.Spec.Template.Spec, k)
	}

	for range 2 { // the Job after an install, then after an upgrade
		runJob(t, r.etcd.jobs[name+"-auth"].Spec.Template.Spec, k, tools)
	}
	var targets []string
	for _, m := range members {
		targets = append(targets, m.addr+":2381")
	}
	prom := startPrometheus(t, "globaladdr-etcd", targets, filepath.Join(repoRoot(t), "monitoring", etcdRulesFile))
	checkEtcdRules(t, prom)
	writer := bundledClient(t, r, "writer")
	reader := bundledClient(t, r, "reader")
	put := func(host, addr string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := writer.Put(ctx, "/skydns/com/example/"+host, `{"host":"`+addr+`"}`)
		return err
	}
	must(t, put("app", exampleInternal))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := reader.Put(ctx, "/skydns/com/example/evil", `{"host":"192.168.0.66"}`); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("the reader's write: %v, want permission denied", err)
	}
	if _, err := writer.Put(ctx, "/other", "x"); !errors.Is(err, rpctypes.ErrPermissionDenied) {
		t.Errorf("the writer's write outside the tree: %v, want permission denied", err)
	}

	deploy := r.only(t)
	srv := startCoreDNS(t, r.podCorefile(t, deploy, k))
	dnsAddr := srv.Addr("dns")
	waitServing(t, dnsAddr)
	checkExternalView(t, dnsAddr, exampleDomain, exampleGlobal)

	answered := func(host string) {
		t.Helper()
		eventually(t, 30*time.Second, host+"'s answer", func() error {
			return answers(dnsAddr, host+"."+exampleDomain+".", dns.TypeA, []string{exampleGlobal})
		})
	}
	for i, leader := range []bool{false, true} {
		m := members.find(t, writer, leader)
		m.stop()
		eventually(t, 30*time.Second, "Prometheus sees "+m.pod+" down", func() error {
			if n, err := prom.query(`up{job="globaladdr-etcd"} == 0`); err != nil || n != 1 {
				return fmt.Errorf("%d members down: %v", n, err)
			}
			return nil
		})
		host := fmt.Sprintf("after%d", i)
		eventually(t, 30*time.Second, "a write with "+m.pod+" down", func() error { return put(host, exampleInternal) })
		answered(host)
		m.start(t, etcdBin, sts.Spec.Template.Spec, k)
	}
	for i := range members {
		members[i].stop()
	}
	for i := range members {
		members[i].start(t, etcdBin, sts.Spec.Template.Spec, k)
	}
	eventually(t, 30*time.Second, "a write after every member restarted", func() error { return put("restarted", exampleInternal) })
	for _, host := range []string{"app", "after0", "after1", "restarted"} {
		answered(host)
	}

	runJob(t, r.etcd.cronJobs[name+"-defrag"].Spec.JobTemplate.Spec.Template.Spec, k, tools)

	checkBundledSidecar(t, r, k)
	answered("hooked")

	backups := t.TempDir()
	backup := r.etcd.cronJobs[name+"-backup"].Spec.JobTemplate.Spec.Template.Spec
	for range 3 {
		runJob(t, backup, k, tools, "backup="+backups, "KEEP=2")
		time.Sleep(1100 * time.Millisecond) // a snapshot's name has the second
	}
	saved, _ := filepath.Glob(filepath.Join(backups, "snapshot-*.db"))
	if len(saved) != 2 {
		t.Fatalf("the backups: %v, want the newest 2 of 3", saved)
	}

	// Restore, as docs/bundled-etcd.md says: the release installed anew
	// (its Secrets kept), its members' volumes new and empty, from the
	// newest snapshot of the backups' volume.
	srv.Stop()
	for i := range members {
		members[i].stop()
	}
	restored := renderRelease(t, filepath.Join(chartDir, "ci", "bundled-etcd-values.yaml"), writeValues(t, fmt.Sprintf(
		"etcd: {cluster: {members: 3, restore: {claim: %s-backup, file: %s}}}", name, filepath.Base(saved[len(saved)-1]))))
	spec := restored.etcd.statefulSets[name].Spec.Template.Spec
	utl := filepath.Join(filepath.Dir(etcdBin), "etcdutl-3.6")
	if _, err := os.Stat(utl); err != nil {
		prereq.Missing(t, "%s: run make etcd-bins", utl)
	}
	for i := range members {
		m := &members[i]
		m.data = t.TempDir()
		m.restore(t, spec, k, tools, utl, backups)
		m.start(t, etcdBin, spec, k)
	}
	runJob(t, restored.etcd.jobs[name+"-auth"].Spec.Template.Spec, k, tools)
	srv = startCoreDNS(t, r.podCorefile(t, deploy, k))
	dnsAddr = srv.Addr("dns")
	waitServing(t, dnsAddr)
	for _, host := range []string{"app", "after0", "after1", "restarted", "hooked"} {
		answered(host)
	}
}

// restore runs the member's restore init container as spec gives it, the
// snapshot's volume the directory backups, etcdutl utl.
func (m *etcdMember) restore(t *testing.T, spec corev1.PodSpec, k cluster, tools jobTools, utl, backups string) {
	t.Helper()
	var c *corev1.Container
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == "restore" {
			c = &spec.InitContainers[i]
		}
	}
	if c == nil {
		t.Fatal("no restore init container")
	}
	paths := podPaths(t, spec, *c, k, map[string]string{"data": m.data, "backup": backups, "tools": tools.applets})
	var args []string
	for _, a := range c.Command {
		args = append(args, strings.ReplaceAll(paths.Replace(strings.ReplaceAll(a, "$(POD_NAME)", m.pod)), "/usr/local/bin/etcdutl", utl))
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s's restore: %v\n%s", m.pod, err, out)
	}
}

// checkChartEtcdRelease fails t unless the image of sts, the bundled etcd,
// is the etcd release make etcd-bins builds as etcd-3.6, which the tests
// run.
func checkChartEtcdRelease(t *testing.T, sts *appsv1.StatefulSet) {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join("etcd", "v3.6", "go.mod"))
	must(t, err)
	values := chartValues(t, filepath.Join(chartDir, "values.yaml"))
	tag, _ := valueAt(values, "etcd.cluster.image.tag").(string)
	if !strings.Contains(string(mod), "go.etcd.io/etcd/server/v3 "+tag+"\n") {
		t.Errorf("%s runs etcd %s, and test/etcd/v3.6 builds another release:\n%s", sts.GetName(), tag, mod)
	}
}

// etcdMember is a member of the bundled etcd, run as its pod would be.
type etcdMember struct {
	pod, ns, addr string
	url           string // its client URL, by its name
	data          string // its volume, kept across restarts
	p             *etcdlab.Process
}

// etcdMembers are the members of the bundled etcd.
type etcdMembers []etcdMember

// start runs the member's container as spec gives it: bin for its command,
// $(POD_NAME) its pod's name, its volumes directories (the data, and the
// Secrets of k), in its namespace.
func (m *etcdMember) start(t *testing.T, bin string, spec corev1.PodSpec, k cluster) {
	t.Helper()
	c := spec.Containers[0]
	paths := podPaths(t, spec, c, k, map[string]string{"data": m.data})
	var args []string
	for _, a := range c.Args {
		args = append(args, paths.Replace(strings.ReplaceAll(a, "$(POD_NAME)", m.pod)))
	}
	m.p = etcdlab.Run(t, m.ns, nil, bin, args...)
}

// stop kills the member.
func (m *etcdMember) stop() { m.p.Kill() }

// find returns the member that leads the cluster, or one that does not,
// asking cli.
func (ms etcdMembers) find(t *testing.T, cli *clientv3.Client, leader bool) *etcdMember {
	t.Helper()
	var found *etcdMember
	eventually(t, 30*time.Second, "the members' status", func() error {
		for i := range ms {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			status, err := cli.Status(ctx, ms[i].url)
			cancel()
			if err != nil {
				return err
			}
			if (status.Leader == status.Header.MemberId) == leader {
				found = &ms[i]
				return nil
			}
		}
		return errors.New("no member fits")
	})
	return found
}

// podPaths returns what turns the paths of container c of spec into
// directories of the test: each volume it mounts, a directory holding the
// Secret's or ConfigMap's keys from k, or dirs' (by volume name).
func podPaths(t *testing.T, spec corev1.PodSpec, c corev1.Container, k cluster, dirs map[string]string) *strings.Replacer {
	t.Helper()
	var pairs []string
	for _, mount := range c.VolumeMounts {
		dir, ok := dirs[mount.Name]
		if !ok {
			dir = t.TempDir()
			for _, v := range spec.Volumes {
				var files map[string]string
				switch {
				case v.Name != mount.Name:
					continue
				case v.Secret != nil:
					files = k.secrets[v.Secret.SecretName]
				case v.ConfigMap != nil:
					files = k.configMaps[v.ConfigMap.Name]
				default:
					t.Fatalf("volume %s: neither a Secret, a ConfigMap, nor one the test gives", v.Name)
				}
				if files == nil {
					t.Fatalf("volume %s: the release makes no such Secret or ConfigMap", v.Name)
				}
				for key, content := range files {
					writeSecret(t, filepath.Join(dir, key), []byte(content))
				}
			}
		}
		path := strings.TrimSuffix(mount.MountPath, "/")
		pairs = append(pairs, path+"/", dir+"/", path, dir)
	}
	return strings.NewReplacer(pairs...)
}

// jobTools is what the Jobs' pods run besides their scripts: the etcd
// image's etcdctl (Debian's, a client of every release) in a directory for
// /usr/local/bin, and busybox's applets as the Jobs' init container
// installs them, in a directory for the tools volume.
type jobTools struct{ bin, applets string }

// newJobTools makes the directories of jobTools.
func newJobTools(t *testing.T) jobTools {
	t.Helper()
	j := jobTools{bin: t.TempDir(), applets: t.TempDir()}
	must(t, os.Symlink(prereq.Program(t, "etcdctl", "etcd-client"), filepath.Join(j.bin, "etcdctl")))
	if out, err := exec.Command(busybox(t), "--install", "-s", j.applets).CombinedOutput(); err != nil {
		t.Fatalf("busybox --install: %v\n%s", err, out)
	}
	return j
}

// runJob runs the container of a Job's pod spec to its end, as the kubelet
// would: its command and environment with the paths of tools and its
// volumes (the Secrets and ConfigMaps of k; a volume named in dirs, as
// NAME=DIR, that directory), its environment from values and k's Secrets,
// VAR=VALUE of dirs overriding a variable. t fails if it fails.
func runJob(t *testing.T, spec corev1.PodSpec, k cluster, tools jobTools, dirs ...string) {
	t.Helper()
	c := spec.Containers[0]
	given := map[string]string{"tools": tools.applets}
	override := map[string]string{}
	for _, d := range dirs {
		name, value, _ := strings.Cut(d, "=")
		if strings.ToUpper(name) == name {
			override[name] = value
		} else {
			given[name] = value
		}
	}
	mounts := podPaths(t, spec, c, k, given)
	paths := func(s string) string { return strings.ReplaceAll(mounts.Replace(s), "/usr/local/bin", tools.bin) }
	var env []string
	for _, e := range c.Env {
		value := e.Value
		if ref := e.ValueFrom; ref != nil {
			value = lookupKey(t, "Secret", k.secrets, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
		}
		if v, ok := override[e.Name]; ok {
			value = v
		}
		env = append(env, e.Name+"="+paths(value))
	}
	var args []string
	for _, a := range append(c.Command, c.Args...) {
		args = append(args, paths(a))
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Job %s: %v\n%s", c.Name, err, out)
	}
	t.Logf("Job %s:\n%s", c.Name, out)
}

// bundledClient returns a client of every member of r's bundled etcd as
// its user (reader, writer), with the clients' certificate.
func bundledClient(t *testing.T, r *release, user string) *clientv3.Client {
	t.Helper()
	name := helmRelease + "-etcd"
	certs := r.etcd.secrets[name+"-client"].Data
	pair, err := tls.X509KeyPair(certs["tls.crt"], certs["tls.key"])
	must(t, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs["ca.crt"])
	var urls []string
	for i := range int(*r.etcd.statefulSets[name].Spec.Replicas) {
		urls = append(urls, fmt.Sprintf("https://%s-%d.%s-peer.default.svc:2379", name, i, name))
	}
	login := r.etcd.secrets[name+"-"+user].Data
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   urls,
		TLS:         &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool},
		Username:    string(login["username"]),
		Password:    string(login["password"]),
		DialTimeout: 5 * time.Second,
	})
	must(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

// checkBundledSidecar runs the webhook sidecar as external-dns's chart
// renders it with externalDNSWebhookValues, beside r (webhook.enabled): its
// Corefile from r's ConfigMap, its user and certificate r's Secrets in k.
// It writes what external-dns sends as the writer.
func checkBundledSidecar(t *testing.T, r *release, k cluster) {
	t.Helper()
	chart, _ := externalDNSChart(t)
	d := externalDNSDeployment(t, renderExternalDNS(t, chart, externalDNSWebhookValues))
	hook := podContainer(t, d, "webhook")
	spec := d.Spec.Template.Spec
	mounts := podPaths(t, spec, hook, k, nil)
	env := map[string]string{}
	for _, e := range hook.Env {
		env[e.Name] = e.Value
		if ref := e.ValueFrom; ref != nil {
			env[e.Name] = lookupKey(t, "Secret", k.secrets, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
		}
	}
	corefile := mounts.Replace(k.configMaps[helmRelease+"-webhook"]["Corefile"])
	webhookPort, healthPort := freePort(t), freePort(t)
	corefile = strings.NewReplacer("127.0.0.1:8888 {", "127.0.0.1:"+webhookPort+" {", "health :8080", "health :"+healthPort).Replace(corefile)
	sidecar := startSidecar(t, hook, corefile, env)
	sidecar.awaitReady(t, time.Minute, func() error { return getOK("http://127.0.0.1:" + healthPort + "/readyz") })
	changes := `{"create":[{"dnsName":"hooked.` + exampleDomain + `","targets":["` + exampleInternal + `"],"recordType":"A","recordTTL":303}]}`
	if resp, body := webhookCall(t, "POST", "http://127.0.0.1:"+webhookPort+"/records", changes); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /records: %d %s", resp.StatusCode, body)
	}
}

// checkEtcdRules checks monitoring/'s rules on the bundled etcd against
// the members prom scrapes: each etcd metric they name has a series, and
// Prometheus evaluates every rule without error. (Their kube-state-metrics
// series, the backup's CronJob's, are not made here.)
func checkEtcdRules(t *testing.T, prom *prometheusServer) {
	t.Helper()
	names := map[string]bool{}
	for _, g := range readRuleFile(t, etcdRulesFile).Groups {
		for _, r := range g.Rules {
			for _, n := range etcdMetricName.FindAllString(r.Expr, -1) {
				names[n] = true
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s names no etcd metric", etcdRulesFile)
	}
	eventually(t, time.Minute, "Prometheus has scraped the members and evaluated the rules", func() error {
		for n := range names {
			if got, err := prom.query(n + `{job="globaladdr-etcd"}`); err != nil || got != 3 {
				return fmt.Errorf("%s: %d series, want one per member: %v", n, got, err)
			}
		}
		return prom.evaluated(t)
	})
}

// etcdMetricName matches the names of etcd's metrics, and up.
var etcdMetricName = regexp.MustCompile(`\b(etcd_[a-z0-9_]+|up)\b`)
