package test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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
	serviceAccounts map[string]*corev1.ServiceAccount
	roles           map[string]*rbacv1.Role
	roleBindings    map[string]*rbacv1.RoleBinding
	pods            map[string]*corev1.Pod // helm test's
	etcd            bundledEtcd
	// docs are the manifests as helm rendered them, one object each.
	docs []string
}

// renderRelease renders the chart with the values files (see helmTemplate)
// and decodes every manifest strictly (see decodeRelease).
func renderRelease(t *testing.T, valuesFiles ...string) *release {
	t.Helper()
	return decodeRelease(t, helmTemplate(t, valuesFiles...))
}

// decodeRelease decodes every manifest of what helm template rendered
// strictly: an unknown or misplaced field, or a kind the chart should not
// make, fails t.
func decodeRelease(t *testing.T, rendered string) *release {
	t.Helper()
	r := &release{
		manifests:       manifests{map[string]*corev1.ConfigMap{}, map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}},
		pdbs:            map[string]*policyv1.PodDisruptionBudget{},
		serviceMonitors: map[string]*serviceMonitor{},
		prometheusRules: map[string]*prometheusRule{},
		serviceAccounts: map[string]*corev1.ServiceAccount{},
		roles:           map[string]*rbacv1.Role{},
		roleBindings:    map[string]*rbacv1.RoleBinding{},
		pods:            map[string]*corev1.Pod{},
		etcd:            newBundledEtcd(),
	}
	for _, doc := range helmDocs(rendered) {
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
	case "v1 ServiceAccount":
		return decodeInto(doc, r.serviceAccounts)
	case "rbac.authorization.k8s.io/v1 Role":
		return decodeInto(doc, r.roles)
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return decodeInto(doc, r.roleBindings)
	case "v1 Pod":
		return decodeInto(doc, r.pods)
	case "apps/v1 StatefulSet":
		return decodeInto(doc, r.etcd.statefulSets)
	case "v1 Secret":
		return decodeInto(doc, r.etcd.secrets)
	case "batch/v1 Job":
		return decodeInto(doc, r.etcd.jobs)
	case "batch/v1 CronJob":
		return decodeInto(doc, r.etcd.cronJobs)
	case "networking.k8s.io/v1 NetworkPolicy":
		return decodeInto(doc, r.etcd.networkPolicies)
	case "v1 PersistentVolumeClaim":
		return decodeInto(doc, r.etcd.claims)
	case certManagerV1 + " Certificate":
		return decodeInto(doc, r.etcd.certificates)
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
