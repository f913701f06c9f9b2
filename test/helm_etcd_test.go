package test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// checkBundledEtcd checks the bundled etcd of a release rendered with
// values, if it has one (etcd.endpoints empty): as many members as
// etcd.cluster.members, a budget that keeps their quorum (none for one
// member), each Secret the members, Jobs and DNS pods mount made by the
// release (or by cert-manager, from the release's Certificates), the DNS
// pods logged in as the reader, or the writer where they take ACME
// UPDATEs, the Jobs' pods apart from the DNS pods' Services, and no
// password in a ConfigMap.
func checkBundledEtcd(t *testing.T, r *release, values map[string]any) {
	t.Helper()
	name := helmRelease + "-etcd"
	sts, ok := r.etcd.statefulSets[name]
	if endpoints := words(valueAt(values, "etcd.endpoints")); endpoints != "" {
		if ok || len(r.etcd.secrets) > 0 {
			t.Errorf("etcd.endpoints %s: the release runs an etcd too", endpoints)
		}
		return
	}
	if !ok {
		t.Fatalf("no etcd.endpoints, and no StatefulSet %s", name)
	}
	members := 1
	if m, ok := valueAt(values, "etcd.cluster.members").(float64); ok {
		members = int(m)
	}
	if got := int(*sts.Spec.Replicas); got != members {
		t.Errorf("%d members, want %d", got, members)
	}
	pdb, ok := r.pdbs[name]
	switch {
	case members == 1 && ok:
		t.Error("a budget for one member: it would block every drain")
	case members > 1 && (!ok || pdb.Spec.MinAvailable.IntValue() != members/2+1):
		t.Errorf("%d members: want a budget of minAvailable %d, got %v", members, members/2+1, pdb)
	}
	made := map[string]bool{}
	for n := range r.etcd.secrets {
		made[n] = true
	}
	for _, c := range r.etcd.certificates {
		made[c.Spec.SecretName] = true
	}
	var specs []corev1.PodSpec
	specs = append(specs, sts.Spec.Template.Spec, r.only(t).Spec.Template.Spec)
	for _, j := range r.etcd.jobs {
		specs = append(specs, j.Spec.Template.Spec)
		checkNotSelected(t, r, j.Name, j.Spec.Template.Labels)
	}
	for _, j := range r.etcd.cronJobs {
		specs = append(specs, j.Spec.JobTemplate.Spec.Template.Spec)
		checkNotSelected(t, r, j.Name, j.Spec.JobTemplate.Spec.Template.Labels)
	}
	for _, spec := range specs {
		for _, secret := range podSecrets(spec) {
			if strings.HasPrefix(secret, name+"-") && !made[secret] {
				t.Errorf("the Secret %s is mounted, and the release does not make it", secret)
			}
		}
	}
	user := name + "-reader"
	if valueAt(values, "lan.acme.enabled") == true {
		user = name + "-writer"
	}
	if got := podSecrets(r.only(t).Spec.Template.Spec); !strings.Contains(strings.Join(got, " "), user) {
		t.Errorf("the DNS pods log in with %v, want %s", got, user)
	}
	for _, s := range r.etcd.secrets {
		if s.Type != corev1.SecretTypeBasicAuth {
			continue
		}
		for _, cm := range r.configMaps {
			for key, data := range cm.Data {
				if strings.Contains(data, string(s.Data["password"])) {
					t.Errorf("ConfigMap %s's %s holds %s's password", cm.Name, key, s.Name)
				}
			}
		}
	}
}

// podSecrets returns the Secrets a pod's spec names: as volumes, and in its
// containers' environment.
func podSecrets(spec corev1.PodSpec) []string {
	var names []string
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			names = append(names, v.Secret.SecretName)
		}
	}
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				names = append(names, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	return names
}

// checkNotSelected fails t if a Service or budget of the DNS pods selects
// the pods of job, labelled labels.
func checkNotSelected(t *testing.T, r *release, job string, labels map[string]string) {
	t.Helper()
	selects := func(selector map[string]string) bool {
		for k, v := range selector {
			if labels[k] != v {
				return false
			}
		}
		return len(selector) > 0
	}
	for _, s := range r.services {
		if selects(s.Spec.Selector) {
			t.Errorf("Service %s selects the pods of %s", s.Name, job)
		}
	}
	for _, p := range r.pdbs {
		if selects(p.Spec.Selector.MatchLabels) {
			t.Errorf("%s selects the pods of %s", fmt.Sprint("PodDisruptionBudget ", p.Name), job)
		}
	}
}
