package test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/test"

	"github.com/miekg/dns"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// webhookMedia is external-dns's webhook protocol's media type.
const webhookMedia = "application/external.dns.webhook+json;version=1"

// TestWebhookExample starts webhook.Corefile, the sidecar of external-dns's
// webhook provider, and sends it what external-dns sends: the negotiation,
// a change set with one name marked internal-only and one exposed, and the
// read back. The records land in etcd as the coredns provider writes them,
// and the example Corefiles' views serve them: the internal view both
// names, the external view (external.Corefile) only the one not marked.
func TestWebhookExample(t *testing.T) {
	etcd := startEtcd(t)
	env, _ := exampleEnv(t, etcd)
	setEnv(t, env)
	corefile := readExample(t, "webhook.Corefile")
	checkHeader(t, "webhook.Corefile", corefile)
	c := startExample(t, examplePorts.Replace(corefile), env)
	api := "http://" + c.Addr("webhook")

	checkNegotiation(t, api, exampleDomain)
	changes := `{"create":[` +
		`{"dnsName":"app.` + exampleDomain + `","targets":["` + exampleInternal + `"],"recordType":"A","recordTTL":303},` +
		`{"dnsName":"grafana.` + exampleDomain + `","targets":["192.168.0.52"],"recordType":"A","recordTTL":303,"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]}]}`
	if resp, body := webhookCall(t, "POST", api+"/records", changes); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /records: %d %s", resp.StatusCode, body)
	}
	resp, body := webhookCall(t, "GET", api+"/records", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"providerSpecific":[{"name":"webhook/globaladdr-external","value":"false"}]`) {
		t.Fatalf("GET /records: %d %s", resp.StatusCode, body)
	}
	stored, err := etcd.Client().Get(context.Background(), "/skydns/com/example/grafana/", clientv3.WithPrefix())
	if err != nil || len(stored.Kvs) != 1 || !strings.Contains(string(stored.Kvs[0].Value), `"globaladdr-external":"false"`) {
		t.Fatalf("etcd holds %v, %v", stored, err)
	}
	checkHTTP(t, "http://"+c.Addr("health")+"/healthz", "ok")

	views := startExample(t, examplePorts.Replace(readExample(t, "single-process.Corefile")), env)
	waitServing(t, views.Addr("internal"))
	waitServing(t, views.Addr("external"))
	checkInternal(t, views.Addr("internal"))
	checkCase(t, views.Addr("internal"), test.Case{
		Qname: "grafana." + exampleDomain + ".", Qtype: dns.TypeA,
		Answer: []dns.RR{test.A("grafana." + exampleDomain + ". 303 IN A 192.168.0.52")},
	})
	checkExternalView(t, views.Addr("external"), exampleDomain, exampleGlobal)
	if m := query(t, "udp", views.Addr("external"), "grafana."+exampleDomain+".", dns.TypeA); m.Rcode != dns.RcodeNameError {
		t.Errorf("the external view answers grafana, marked internal-only: %v", m)
	}
}

// checkNegotiation asks the webhook API at api what external-dns asks first:
// GET / answers 200 with external-dns's media type exactly (its client
// refuses any other Content-Type), and the zone domain as the domains the
// API manages.
func checkNegotiation(t *testing.T, api, domain string) {
	t.Helper()
	resp, body := webhookCall(t, "GET", api+"/", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != webhookMedia ||
		strings.TrimSpace(body) != `{"include":["`+domain+`"]}` {
		t.Fatalf("GET /: %d, Content-Type %q, %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// webhookCall sends external-dns's webhook request method url with body, as
// its client does, and returns the answer and its body.
func webhookCall(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", webhookMedia)
	if body != "" {
		req.Header.Set("Content-Type", webhookMedia)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestWebhookExampleUnsetPort starts webhook.Corefile with WEBHOOK_PORT,
// then HEALTH_PORT, unset, as CoreDNS expands them (to nothing): start-up
// stops, naming the plugin, the file's line and the address without a port,
// instead of listening on a port the system picks, where external-dns
// never calls.
func TestWebhookExampleUnsetPort(t *testing.T) {
	etcd := startEtcd(t)
	env, _ := exampleEnv(t, etcd)
	example := readExample(t, "webhook.Corefile")
	for _, unset := range []string{"WEBHOOK_PORT", "HEALTH_PORT"} {
		t.Run(unset, func(t *testing.T) {
			placeholder := "{$" + unset + "}"
			lines := strings.Split(example, "\n")
			line := slices.IndexFunc(lines, func(s string) bool { return strings.Contains(s, placeholder) }) + 1
			corefile := expandExample(t, examplePorts.Replace(strings.ReplaceAll(example, placeholder, "")), env)
			_, err := tryStartCoreDNS(t, corefile)
			for _, want := range []string{"plugin/webhook", fmt.Sprintf("Corefile:%d", line), "has no port", unset} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("start-up with %s unset: %v, want an error saying %q", unset, err, want)
				}
			}
		})
	}
}
