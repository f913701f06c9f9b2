package test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/corednstest"
)

// apiServerPrefix is the etcd prefix kube-apiserver keeps its objects
// under: beside external-dns's /skydns in the same etcd, as a cluster whose
// etcd serves both would have it.
const apiServerPrefix = "/registry"

// apiServer is a kube-apiserver started by startAPIServer: no kubelet, no
// controller manager, no scheduler; objects are stored and validated, and
// nothing acts on them but the test and the programs it runs.
type apiServer struct {
	url        string // https://127.0.0.1:PORT
	kubeconfig string // a kubeconfig file for its administrator
	secrets    apiServerSecrets
	cmd        []string // its command line
	dir        string   // its files and output
	proc       *program // the running process
	starts     int      // how many times it was started
}

// startAPIServer starts kube-apiserver (from kubeBinDir) on a free loopback
// port, storing its objects in the etcd at etcdURL under apiServerPrefix,
// with the keys, certificate and tokens of writeAPIServerSecrets, and waits
// until its /readyz answers ok. It is killed when t ends; its output, kept
// in a file, is logged if t failed.
func startAPIServer(t *testing.T, etcdURL string) *apiServer {
	t.Helper()
	bin := kubeBin(t, "kube-apiserver")
	dir := t.TempDir()
	s := writeAPIServerSecrets(t, dir)
	port, err := corednstest.FreeTCPPort()
	if err != nil {
		t.Fatal(err)
	}
	api := &apiServer{
		url:        "https://127.0.0.1:" + strconv.Itoa(port),
		kubeconfig: filepath.Join(dir, "kubeconfig"),
		secrets:    s,
		dir:        dir,
	}
	writeKubeconfig(t, api.kubeconfig, api.url, s.caPEM, "admin", s.token)
	api.cmd = []string{bin,
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=" + apiServerPrefix,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + s.certFile,
		"--tls-private-key-file=" + s.keyFile,
		"--token-auth-file=" + s.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-signing-key-file=" + s.saKeyFile,
		"--service-account-key-file=" + s.saPubFile,
		// Dual-stack, as the clusters the README leans on: the chart's
		// Services may require both families (ci/ports-values.yaml).
		"--service-cluster-ip-range=10.96.0.0/16,fd00:10:96::/112",
		// No endpoints for the kubernetes Service: its address would be
		// 127.0.0.1, which an Endpoints object may not hold.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + dir,
		"--profiling=false",
	}
	api.start(t)
	return api
}

// start starts the API server's process, at first or again after stop, on
// the same port and the same etcd, and waits until its /readyz answers ok.
func (api *apiServer) start(t *testing.T) {
	t.Helper()
	api.starts++
	name := "kube-apiserver"
	if api.starts > 1 {
		name = fmt.Sprintf("kube-apiserver-%d", api.starts)
	}
	api.proc = startProgram(t, name, exec.Command(api.cmd[0], api.cmd[1:]...), api.dir)
	api.proc.awaitReady(t, 2*time.Minute, api.ready)
}

// stop kills the API server, as a crash or a node going down does.
func (api *apiServer) stop(t *testing.T) {
	t.Helper()
	api.proc.signal(t, syscall.SIGKILL)
}

// ready returns nil when the API server's /readyz answers ok, else what it
// says of its checks.
func (api *apiServer) ready() error {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(api.secrets.caPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, api.url+"/readyz?verbose", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+api.secrets.token)
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s\n%s", resp.Status, body)
	}
	return nil
}

// writeKubeconfig writes a kubeconfig file at path: user's token, for the
// API server at url with the certificate caPEM as the only one trusted.
// JSON is YAML, and encodes the certificate's []byte in base64, as the
// certificate-authority-data field wants it.
func writeKubeconfig(t *testing.T, path, url string, caPEM []byte, user, token string) {
	t.Helper()
	type named struct {
		Name    string `json:"name"`
		Cluster any    `json:"cluster,omitempty"`
		User    any    `json:"user,omitempty"`
		Context any    `json:"context,omitempty"`
	}
	config, err := json.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []named{{Name: "test", Cluster: map[string]any{
			"server":                     url,
			"certificate-authority-data": caPEM,
		}}},
		"users":           []named{{Name: user, User: map[string]string{"token": token}}},
		"contexts":        []named{{Name: "test", Context: map[string]string{"cluster": "test", "user": user}}},
		"current-context": "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	writeSecret(t, path, config)
}
