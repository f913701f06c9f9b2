package test

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifests are the objects of corefile-examples/kubernetes, by name.
type manifests struct {
	configMaps  map[string]*corev1.ConfigMap
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
}

// TestKubernetesManifests decodes every manifest of corefile-examples/
// kubernetes strictly (an unknown or misplaced field fails), checks that
// they fit together (the Deployment runs the image non-root with its
// Corefile from the ConfigMap, the Service reaches its DNS ports, external-dns
// writes to the etcd CoreDNS reads, the probes and ports match the Corefile's
// listeners, the Corefile is external.Corefile's), then starts CoreDNS with
// the ConfigMap's Corefile and the Deployment's environment, and asks it
// what the probes and an Internet client would.
func TestKubernetesManifests(t *testing.T) {
	m := readManifests(t)
	deploy := m.deployment(t, "coredns-external")
	c := deploy.Spec.Template.Spec.Containers[0]
	corefile := m.corefile(t, deploy)
	checkCoreDNSPod(t, deploy)
	checkService(t, m.service(t, "coredns-external"), deploy)
	env := withoutEtcdSecurity(containerEnv(c))
	checkExternalDNS(t, m.deployment(t, "external-dns"), env["ETCD_ENDPOINT"])

	corefile = withPortPlaceholders(t, corefile, c)
	if want := withoutHeader(examplePorts.Replace(readExample(t, "external.Corefile"))); corefile != want {
		t.Errorf("the ConfigMap's Corefile differs from external.Corefile's:\n%s\nexternal.Corefile:\n%s", corefile, want)
	}

	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+env["DOMAIN"], exampleInternal))
	env["ETCD_ENDPOINT"] = etcd.Endpoint()
	setEnv(t, env)
	srv := startExample(t, corefile, env)
	checkExternalView(t, srv.Addr("dns"), env["DOMAIN"], env["GLOBAL_ADDR"])
	checkProbes(t, srv, c)
}

// withPortPlaceholders returns corefile, the Corefile container c runs, with
// the ports c's probes and container ports name turned into startCoreDNS's
// placeholders: the DNS port of every server block key becomes {port:dns},
// and the health, ready and prometheus ports {httpport:NAME}. t fails when
// the Corefile lacks one of them.
func withPortPlaceholders(t *testing.T, corefile string, c corev1.Container) string {
	t.Helper()
	dnsPort := fmt.Sprintf(":%d ", containerPort(t, c, "dns"))
	lines := strings.Split(corefile, "\n")
	keys := 0
	for i, l := range lines {
		if strings.HasSuffix(l, " {") && !strings.HasPrefix(l, " ") {
			keys += strings.Count(l, dnsPort)
			lines[i] = strings.ReplaceAll(l, dnsPort, ":{port:dns} ")
		}
	}
	if keys == 0 {
		t.Fatalf("no server block of the ConfigMap's Corefile listens on %q, which the Deployment names", dnsPort)
	}
	corefile = strings.Join(lines, "\n")
	ports := map[string]string{
		fmt.Sprintf("health :%d", c.LivenessProbe.HTTPGet.Port.IntValue()): "health :{httpport:health}",
		fmt.Sprintf("ready :%d", c.ReadinessProbe.HTTPGet.Port.IntValue()): "ready :{httpport:ready}",
		fmt.Sprintf("prometheus :%d", containerPort(t, c, "metrics")):      "prometheus :{httpport:metrics}",
	}
	for old, placeholder := range ports {
		if !strings.Contains(corefile, old) {
			t.Fatalf("the ConfigMap's Corefile lacks %q, which the Deployment names", old)
		}
		corefile = strings.ReplaceAll(corefile, old, placeholder)
	}
	return corefile
}

// checkProbes asks srv, running container c's Corefile, what c's liveness and
// readiness probes and a Prometheus scrape would.
func checkProbes(t *testing.T, srv *coreDNS, c corev1.Container) {
	t.Helper()
	checkHTTP(t, "http://"+srv.Addr("health")+c.LivenessProbe.HTTPGet.Path, "")
	waitReady(t, "http://"+srv.Addr("ready")+c.ReadinessProbe.HTTPGet.Path)
	checkHTTP(t, "http://"+srv.Addr("metrics")+"/metrics", "coredns_dns_requests_total")
}

// checkCoreDNSPod checks the CoreDNS Deployment's pod and its container
// (checkCoreDNSContainer).
func checkCoreDNSPod(t *testing.T, d *appsv1.Deployment) {
	checkCoreDNSContainer(t, d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0])
}

// checkCoreDNSContainer checks container c of pod: the published image, non-root with
// nothing but NET_BIND_SERVICE and a read-only root, HTTP probes, -conf
// naming the mounted Corefile.
func checkCoreDNSContainer(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	if !strings.HasPrefix(c.Image, "ghcr.io/globaladdr/globaladdr:") {
		t.Errorf("image %q is not the published release's", c.Image)
	}
	if pod.SecurityContext == nil || !ptrTrue(pod.SecurityContext.RunAsNonRoot) {
		t.Error("the pod may run as root: runAsNonRoot is not set")
	}
	sc := c.SecurityContext
	if sc == nil || !ptrTrue(sc.ReadOnlyRootFilesystem) || sc.Capabilities == nil ||
		!slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_BIND_SERVICE"}) ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %v: want a read-only root, NET_BIND_SERVICE added and ALL dropped", sc)
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Fatal("the container lacks its HTTP liveness or readiness probe")
		}
	}
	if len(c.Command) != 0 || len(c.Args) != 2 || c.Args[0] != "-conf" {
		t.Errorf("command %q, args %q: want the image's entrypoint with -conf FILE", c.Command, c.Args)
	}
}

// corefile returns the Corefile the Deployment d gives CoreDNS with -conf:
// a key of a ConfigMap mounted from a volume.
func (m manifests) corefile(t *testing.T, d *appsv1.Deployment) string {
	c := d.Spec.Template.Spec.Containers[0]
	return m.mountedFile(t, d, c, c.Args[len(c.Args)-1])
}

// mountedFile returns the content of the file at file in container c of
// d's pod: a key of one of m's ConfigMaps, mounted from a volume.
func (m manifests) mountedFile(t *testing.T, d *appsv1.Deployment, c corev1.Container, file string) string {
	t.Helper()
	for _, mount := range c.VolumeMounts {
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name != mount.Name || v.ConfigMap == nil {
				continue
			}
			cm := m.configMap(t, v.ConfigMap.Name)
			for _, item := range v.ConfigMap.Items {
				if path.Join(mount.MountPath, item.Path) == file {
					return cm.Data[item.Key]
				}
			}
		}
	}
	t.Fatalf("no ConfigMap is mounted at %s in %s's container %s", file, d.Name, c.Name)
	return ""
}

// checkService checks that s balances UDP and TCP port 53 to d's DNS ports.
func checkService(t *testing.T, s *corev1.Service, d *appsv1.Deployment) {
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("service %s is of type %q, want LoadBalancer", s.Name, s.Spec.Type)
	}
	pod := d.Spec.Template
	for k, v := range s.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("service %s selects %s=%s, which %s's pods lack", s.Name, k, v, d.Name)
		}
	}
	var served []string
	for _, p := range s.Spec.Ports {
		for _, cp := range pod.Spec.Containers[0].Ports {
			if cp.Protocol == p.Protocol && (p.TargetPort.String() == cp.Name || p.TargetPort.IntValue() == int(cp.ContainerPort)) {
				served = append(served, fmt.Sprintf("%d/%s->%d", p.Port, p.Protocol, cp.ContainerPort))
			}
		}
	}
	slices.Sort(served)
	if want := []string{"53/TCP->53", "53/UDP->53"}; !slices.Equal(served, want) {
		t.Errorf("service %s serves %q, want %q", s.Name, served, want)
	}
}

// checkExternalDNS checks external-dns's Deployment d: the coredns provider,
// Ingresses, the TXT registry with an owner, and the etcd at etcdURL.
func checkExternalDNS(t *testing.T, d *appsv1.Deployment, etcdURL string) {
	c := d.Spec.Template.Spec.Containers[0]
	checkArgs(t, c, "--provider=coredns", "--source=ingress", "--registry=txt", "--txt-owner-id=")
	if got := containerEnv(c)["ETCD_URLS"]; got != etcdURL || got == "" {
		t.Errorf("external-dns writes to ETCD_URLS %q, CoreDNS reads %q", got, etcdURL)
	}
}

// checkArgs fails t unless the arguments of container c hold one beginning
// with each of want.
func checkArgs(t *testing.T, c corev1.Container, want ...string) {
	t.Helper()
	for _, arg := range want {
		if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, arg) }) {
			t.Errorf("container %s lacks %s in %q", c.Name, arg, c.Args)
		}
	}
}

// certManagerManifest is the file of corefile-examples/kubernetes that
// cert-manager reads: its ClusterIssuer is a type of cert-manager's, which
// the main module does not depend on. acmeclient decodes it, and the
// certificate test (acme_test.go) uses its settings.
const certManagerManifest = "cert-manager.yaml"

// externalDNSWebhookValues is the file of corefile-examples/kubernetes that
// holds no manifest: values for external-dns's own chart, which runs our
// image as its webhook sidecar (TestExternalDNSWebhookChart).
const externalDNSWebhookValues = "external-dns-webhook-values.yaml"

// externalDNSPublishValues is the other file of corefile-examples/kubernetes
// that holds values for external-dns's own chart: a second external-dns
// publishing publish's DNSEndpoint objects (TestExternalDNSPublishChart).
const externalDNSPublishValues = "external-dns-publish-values.yaml"

// manifestFiles returns the files of corefile-examples/kubernetes, but
// certManagerManifest and external-dns's values files.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(examplesDir, "kubernetes", "*.yaml"))
	if err != nil || len(all) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var files []string
	for _, f := range all {
		if name := filepath.Base(f); !slices.Contains([]string{certManagerManifest, externalDNSWebhookValues, externalDNSPublishValues}, name) {
			files = append(files, f)
		}
	}
	return files
}

// readManifests decodes every manifest of corefile-examples/kubernetes.
func readManifests(t *testing.T) manifests {
	m := manifests{map[string]*corev1.ConfigMap{}, map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}}
	for _, f := range manifestFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			if err := m.decode(doc); err != nil {
				t.Errorf("%s, document %d: %v", filepath.Base(f), i+1, err)
			}
		}
	}
	return m
}

// decode decodes doc, one object, strictly into the type of its kind.
func (m manifests) decode(doc []byte) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	var obj interface{ GetName() string }
	var add func()
	switch gvk := meta.APIVersion + " " + meta.Kind; gvk {
	case "v1 ConfigMap":
		o := new(corev1.ConfigMap)
		obj, add = o, func() { m.configMaps[o.Name] = o }
	case "apps/v1 Deployment":
		o := new(appsv1.Deployment)
		obj, add = o, func() { m.deployments[o.Name] = o }
	case "v1 Service":
		o := new(corev1.Service)
		obj, add = o, func() { m.services[o.Name] = o }
	default:
		return fmt.Errorf("unexpected kind %q", gvk)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return err
	}
	add()
	return nil
}

func (m manifests) configMap(t *testing.T, name string) *corev1.ConfigMap {
	return lookup(t, "ConfigMap", m.configMaps, name)
}

func (m manifests) deployment(t *testing.T, name string) *appsv1.Deployment {
	d := lookup(t, "Deployment", m.deployments, name)
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("Deployment %s has %d containers, want 1", name, len(d.Spec.Template.Spec.Containers))
	}
	return d
}

func (m manifests) service(t *testing.T, name string) *corev1.Service {
	return lookup(t, "Service", m.services, name)
}

// lookup returns objects[name], and fails t if there is none.
func lookup[T any](t *testing.T, kind string, objects map[string]*T, name string) *T {
	o, ok := objects[name]
	if !ok {
		t.Fatalf("no %s %s among the manifests", kind, name)
	}
	return o
}

// containerEnv returns c's environment variables with plain values.
func containerEnv(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

// containerPort returns the number of c's port called name.
func containerPort(t *testing.T, c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port %s", c.Name, name)
	return 0
}

// withoutHeader returns corefile without its first line, the comment.
func withoutHeader(corefile string) string {
	_, rest, _ := strings.Cut(corefile, "\n")
	return rest
}

func ptrTrue(b *bool) bool { return b != nil && *b }
