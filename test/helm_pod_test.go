package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// cluster is what a release's pod reads besides the release's own objects:
// the Secrets and ConfigMaps its values name, by name and key.
type cluster struct {
	secrets, configMaps map[string]map[string]string
}

// podCorefile returns the Corefile that d's pod runs, as the kubelet and
// CoreDNS would make it, for startCoreDNS: the volumes of d's container are
// written into temporary directories (the release's ConfigMaps and those of
// k, and k's Secrets), which replace their mount paths in the Corefile; its
// {$NAME} placeholders are the container's environment, from plain values
// and k's Secrets (inPod); its ports are placeholders (withPortPlaceholders,
// and {port:external} and {port:xot} for the ports of those names, if any).
// t fails when a volume, a key or a variable is missing.
func (r *release) podCorefile(t *testing.T, d *appsv1.Deployment, k cluster) string {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	corefile := withPortPlaceholders(t, r.inPod(t, d, k, r.corefile(t, d)), c)
	for _, p := range c.Ports {
		if p.Name == "external" || p.Name == "xot" {
			corefile = strings.ReplaceAll(corefile, fmt.Sprintf(":%d {", p.ContainerPort), ":{port:"+p.Name+"} {")
		}
	}
	return corefile
}

// inPod returns corefile as d's container would read it: its volumes written
// into temporary directories that replace their mount paths, and its {$NAME}
// placeholders replaced by the container's environment (see podCorefile).
func (r *release) inPod(t *testing.T, d *appsv1.Deployment, k cluster, corefile string) string {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	for _, m := range c.VolumeMounts {
		dir := t.TempDir()
		for path, content := range r.volumeFiles(t, d, m.Name, k) {
			writeSecret(t, filepath.Join(dir, path), []byte(content))
		}
		corefile = strings.ReplaceAll(corefile, strings.TrimSuffix(m.MountPath, "/")+"/", dir+"/")
	}
	for _, e := range c.Env {
		value := e.Value
		if ref := e.ValueFrom; ref != nil {
			value = lookupKey(t, "Secret", k.secrets, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
		}
		corefile = strings.ReplaceAll(corefile, "{$"+e.Name+"}", value)
	}
	if m := envPlaceholder.FindString(corefile); m != "" {
		t.Fatalf("the Corefile uses %s, which the container's environment lacks", m)
	}
	return corefile
}

// volumeFiles returns the files of d's volume name, by their path in the
// volume: the items of a ConfigMap (the release's, or one of k) or of a
// Secret of k.
func (r *release) volumeFiles(t *testing.T, d *appsv1.Deployment, name string, k cluster) map[string]string {
	t.Helper()
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name != name {
			continue
		}
		var items []corev1.KeyToPath
		var content func(key string) string
		switch {
		case v.ConfigMap != nil:
			items = v.ConfigMap.Items
			content = func(key string) string {
				if cm, ok := r.configMaps[v.ConfigMap.Name]; ok {
					return cm.Data[key]
				}
				return lookupKey(t, "ConfigMap", k.configMaps, v.ConfigMap.Name, key)
			}
		case v.Secret != nil:
			items = v.Secret.Items
			content = func(key string) string { return lookupKey(t, "Secret", k.secrets, v.Secret.SecretName, key) }
		default:
			t.Fatalf("volume %s is neither a ConfigMap nor a Secret", name)
		}
		if len(items) == 0 {
			t.Fatalf("volume %s lists no items", name)
		}
		files := map[string]string{}
		for _, item := range items {
			files[item.Path] = content(item.Key)
		}
		return files
	}
	t.Fatalf("no volume %s", name)
	return nil
}

// lookupKey returns the value of key in the object name of kind, one of
// objects, and fails t when there is none.
func lookupKey(t *testing.T, kind string, objects map[string]map[string]string, name, key string) string {
	t.Helper()
	v, ok := objects[name][key]
	if !ok {
		t.Fatalf("%s %s has no key %s", kind, name, key)
	}
	return v
}

// writeValues writes values, YAML, into a file of t's temporary directory
// and returns its path, for helmTemplate.
func writeValues(t *testing.T, values string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
