package test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// release is the chart rendered with one set of values: every manifest
// decoded strictly into its API type, by kind and name.
type release struct {
	manifests       // ConfigMaps, Deployments and Services
	pdbs            map[string]*policyv1.PodDisruptionBudget
	serviceMonitors map[string]*serviceMonitor
	prometheusRules map[string]*prometheusRule
	// docs are the manifests as helm rendered them, one object each.
	docs []string
}

// renderRelease renders the chart with the values files (see helmTemplate)
// and decodes every manifest strictly: an unknown or misplaced field, or a
// kind the chart should not make, fails t.
func renderRelease(t *testing.T, valuesFiles ...string) *release {
	t.Helper()
	r := &release{
		manifests:       manifests{map[string]*corev1.ConfigMap{}, map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}},
		pdbs:            map[string]*policyv1.PodDisruptionBudget{},
		serviceMonitors: map[string]*serviceMonitor{},
		prometheusRules: map[string]*prometheusRule{},
	}
	for _, doc := range helmDocs(helmTemplate(t, valuesFiles...)) {
		if err := r.decode([]byte(doc)); err != nil {
			t.Errorf("%v in:\n%s", err, doc)
		}
		r.docs = append(r.docs, doc)
	}
	return r
}

// helmDocs returns the manifests helm template rendered, one object each.
func helmDocs(rendered string) []string {
	var docs []string
	for _, doc := range strings.Split(rendered, "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) != "" {
			docs = append(docs, doc+"\n") // the split took it
		}
	}
	return docs
}

// decode decodes doc, one object, strictly into the type of its kind.
func (r *release) decode(doc []byte) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	switch gvk := meta.APIVersion + " " + meta.Kind; gvk {
	case "policy/v1 PodDisruptionBudget":
		return decodeInto(doc, r.pdbs)
	case monitoringV1 + " ServiceMonitor":
		return decodeInto(doc, r.serviceMonitors)
	case monitoringV1 + " PrometheusRule":
		return decodeInto(doc, r.prometheusRules)
	default:
		return r.manifests.decode(doc)
	}
}

// decodeInto decodes doc strictly into a new T and adds it to objects by
// its name.
func decodeInto[T any, P interface {
	*T
	GetName() string
}](doc []byte, objects map[string]*T) error {
	o := P(new(T))
	if err := yaml.UnmarshalStrict(doc, o); err != nil {
		return err
	}
	if _, ok := objects[o.GetName()]; ok {
		return fmt.Errorf("%s is rendered twice", o.GetName())
	}
	objects[o.GetName()] = (*T)(o)
	return nil
}
