package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"
	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// publishSelector selects the objects the publish plugin writes.
const publishSelector = "app.kubernetes.io/managed-by=globaladdr"

// publishLab is what a publication needs: an etcd holding the records and
// the API server's objects, and kube-apiserver with external-dns's
// DNSEndpoint CRD.
type publishLab struct {
	etcd *etcdtest.Server
	api  *apiServer
	k    *kubectl
	env  map[string]string
}

// startPublishLab starts the lab, with the examples' environment plus
// KUBECONFIG (the API server's administrator) and PUBLISH_NAMESPACE
// (default).
func startPublishLab(t *testing.T) *publishLab {
	l := startPublishLabWithoutCRD(t)
	l.installCRD(t)
	return l
}

// startPublishLabWithoutCRD is startPublishLab with an API server that
// does not have the DNSEndpoint CRD yet.
func startPublishLabWithoutCRD(t *testing.T) *publishLab {
	l := &publishLab{etcd: startEtcd(t)}
	l.api = startAPIServer(t, l.etcd.Endpoint())
	l.k = newKubectl(t, l.api)
	l.k.run(t, nil, "wait", "--for=create", "namespace/default", "--timeout=1m")
	l.env, _ = exampleEnv(t, l.etcd)
	l.env["KUBECONFIG"] = l.api.kubeconfig
	l.env["PUBLISH_NAMESPACE"] = "default"
	return l
}

// installCRD installs external-dns's DNSEndpoint CRD, and waits until the
// API server serves it.
func (l *publishLab) installCRD(t *testing.T) {
	t.Helper()
	l.k.run(t, nil, "apply", "-f", dnsEndpointCRD(t))
	l.k.run(t, nil, "wait", "--for=condition=established", "crd/dnsendpoints.externaldns.k8s.io", "--timeout=1m")
}

// publishedObject is a DNSEndpoint object as the API server holds it.
type publishedObject struct {
	Metadata struct {
		Name       string            `json:"name"`
		Labels     map[string]string `json:"labels"`
		Generation int64             `json:"generation"`
	} `json:"metadata"`
	Spec struct {
		Endpoints []wire.Endpoint `json:"endpoints"`
	} `json:"spec"`
}

// objects returns the publication's objects in the default namespace.
func (l *publishLab) objects(t *testing.T) []publishedObject {
	t.Helper()
	var list struct {
		Items []publishedObject `json:"items"`
	}
	out := l.k.run(t, nil, "get", "dnsendpoints", "-l", publishSelector, "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("kubectl get dnsendpoints: %v\n%s", err, out)
	}
	return list.Items
}

// endpoints returns the endpoints of objs as "NAME TYPE TTL TARGETS..."
// lines, sorted.
func endpointLines(objs []publishedObject) []string {
	var lines []string
	for _, o := range objs {
		for _, e := range o.Spec.Endpoints {
			lines = append(lines, fmt.Sprintf("%s %s %d %s", e.DNSName, e.RecordType, e.RecordTTL, strings.Join(e.Targets, " ")))
		}
	}
	slices.Sort(lines)
	return lines
}

// awaitPublished waits until the publication's endpoints are want.
func (l *publishLab) awaitPublished(t *testing.T, want []string) {
	t.Helper()
	slices.Sort(want)
	eventually(t, time.Minute, "the objects hold the external view", func() error {
		if got := endpointLines(l.objects(t)); !slices.Equal(got, want) {
			return fmt.Errorf("the objects hold\n%s\nnot\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return nil
	})
}

// TestPublishExample starts publish.Corefile against a real API server and
// checks the objects hold the external view: the global address for an
// internal one, public addresses as they are, the view's TTLs, no
// ownership record; and that they are written only when it changes: a
// record the view withholds (internal-only) moves nothing, and a new name
// is one write. A reload publishes the view it makes.
func TestPublishExample(t *testing.T) {
	t.Parallel()
	l := startPublishLab(t)
	putRecords(t, l.etcd,
		externaldns.Record{Name: "app." + exampleDomain, Type: "A", Targets: []string{exampleInternal}, TTL: 303, Resource: "ingress/default/app"},
		externaldns.Record{Name: "www." + exampleDomain, Type: "CNAME", Targets: []string{"app." + exampleDomain}, TTL: 300},
		externaldns.Record{Name: "pub." + exampleDomain, Type: "A", Targets: []string{"198.51.100.7"}, TTL: 60},
		externaldns.Record{Name: "txt." + exampleDomain, Type: "TXT", Targets: []string{"v=spf1 -all"}, TTL: 120},
	)
	corefile := expandExample(t, examplePorts.Replace(readExample(t, "publish.Corefile")), l.env)
	c := startCoreDNS(t, corefile)
	waitServing(t, c.Addr("dns"))
	l.awaitPublished(t, []string{
		"app." + exampleDomain + " A 900 " + exampleGlobal, // the view's ttl
		"pub." + exampleDomain + " A 60 198.51.100.7",
		"txt." + exampleDomain + ` TXT 120 "v=spf1 -all"`,
		"www." + exampleDomain + " CNAME 300 app." + exampleDomain,
	})
	// A publication is no transfer: etcdzone's transfer metrics count the
	// secondaries alone (EtcdzoneSecondariesBehind reads them).
	metrics := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
	if v, ok := zoneMetric(metrics, "coredns_etcdzone_transferred_serial", c.Port("dns")); ok {
		t.Errorf("coredns_etcdzone_transferred_serial is %v after a publication, with no secondary: want no sample", v)
	}
	if regexp.MustCompile(`(?m)^coredns_etcdzone_transfers_total\{server="[^"]*:` + strconv.Itoa(c.Port("dns")) + `"`).MatchString(metrics) {
		t.Errorf("coredns_etcdzone_transfers_total counts a publication as a transfer")
	}
	objs := l.objects(t)
	if len(objs) != 1 || objs[0].Metadata.Name != "globaladdr."+exampleDomain+".0" || objs[0].Metadata.Labels["globaladdr/zone"] != exampleDomain || objs[0].Metadata.Labels["globaladdr/set"] != exampleDomain {
		t.Fatalf("objects %+v: want one, named and labeled for the zone", objs)
	}
	generation := objs[0].Metadata.Generation

	putKeys(t, l.etcd, map[string]string{"/skydns/com/example/grafana/x": `{"host":"192.168.0.52","globaladdr-external":"false","targetstrip":1}`})
	putRecords(t, l.etcd, externaldns.Record{Name: "new." + exampleDomain, Type: "A", Targets: []string{"198.51.100.8"}, TTL: 60})
	l.awaitPublished(t, []string{
		"app." + exampleDomain + " A 900 " + exampleGlobal,
		"new." + exampleDomain + " A 60 198.51.100.8",
		"pub." + exampleDomain + " A 60 198.51.100.7",
		"txt." + exampleDomain + ` TXT 120 "v=spf1 -all"`,
		"www." + exampleDomain + " CNAME 300 app." + exampleDomain,
	})
	// The writer looks at the serial every half second: four looks, and
	// still the one write of the new name.
	time.Sleep(2 * time.Second)
	if got := l.objects(t)[0].Metadata.Generation; got != generation+1 {
		t.Errorf("the object's generation went from %d to %d: want one write", generation, got)
	}

	// A reload that hides pub: the old instance gives the Lease up, the new
	// one takes it and publishes the view without pub.
	const ttl = "        ttl 900\n"
	if strings.Count(corefile, ttl) != 1 {
		t.Fatalf("publish.Corefile does not hold %q once", ttl)
	}
	c.Reload(t, strings.Replace(corefile, ttl, ttl+"        hide pub."+exampleDomain+"\n", 1))
	l.awaitPublished(t, []string{
		"app." + exampleDomain + " A 900 " + exampleGlobal,
		"new." + exampleDomain + " A 60 198.51.100.8",
		"txt." + exampleDomain + ` TXT 120 "v=spf1 -all"`,
		"www." + exampleDomain + " CNAME 300 app." + exampleDomain,
	})
}

// TestPublishTwoBlocks publishes two zones from two server blocks on one
// address, each with its Lease: each block says it writes, in a series of
// its own (coredns_publish_leader's lease label), and each zone is
// published in its own set.
func TestPublishTwoBlocks(t *testing.T) {
	t.Parallel()
	l := startPublishLab(t)
	putRecords(t, l.etcd, publicA("pub.example.com", "198.51.100.7"), publicA("pub.example.org", "198.51.100.9"))
	com := fillPublishCorefile(l, "{port:dns}", "prometheus :{httpport:metrics}", l.api.kubeconfig)
	org := strings.NewReplacer("example.com", "example.org", "publish-test", "publish-test-org").Replace(
		fillPublishCorefile(l, "{port:dns}", "", l.api.kubeconfig))
	c := startCoreDNS(t, com+org)
	waitServing(t, c.Addr("dns"))
	l.awaitPublished(t, []string{publicLine("pub.example.com", "198.51.100.7"), publicLine("pub.example.org", "198.51.100.9")})
	eventually(t, 30*time.Second, "a leader series per block", func() error {
		body := scrape(t, "http://"+c.Addr("metrics")+"/metrics")
		for _, lease := range []string{"publish-test", "publish-test-org"} {
			re := regexp.MustCompile(`(?m)^coredns_publish_leader\{lease="` + lease + `",server="dns://[^"]*:` + strconv.Itoa(c.Port("dns")) + `"\} 1$`)
			if !re.MatchString(body) {
				return fmt.Errorf("no coredns_publish_leader of Lease %s at 1", lease)
			}
		}
		return nil
	})
	if got := objectNames(l.objects(t)); !slices.Equal(got, []string{"globaladdr.example.com.0", "globaladdr.example.org.0"}) {
		t.Errorf("objects %v, want one set per zone", got)
	}
}

// TestPublishOneWriterPerSet starts two blocks of one Corefile that publish
// one zone into one namespace: start-up stops at the second, naming the
// first, since the two would take turns writing the set with their views.
// With a set of its own, the second starts.
func TestPublishOneWriterPerSet(t *testing.T) {
	t.Parallel()
	l := startPublishLab(t)
	first := fillPublishCorefile(l, "{port:dns}", "", l.api.kubeconfig)
	second := strings.Replace(fillPublishCorefile(l, "{port:other}", "", l.api.kubeconfig), "lease publish-test 3s", "lease publish-other 3s", 1)
	line := strings.Count(first[:strings.Index(first, "    publish {")], "\n") + 1
	_, err := tryStartCoreDNS(t, first+second)
	want := fmt.Sprintf("plugin/publish: Corefile:%d: zone example.com.: the publish at Corefile:%d writes its set into the same namespace",
		strings.Count(first, "\n")+line, line)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start-up: %v, want an error saying %q", err, want)
	}
	c := startCoreDNS(t, first+strings.Replace(second, "    publish {", "    publish {\n        set other", 1))
	waitServing(t, c.Addr("dns"))
}
