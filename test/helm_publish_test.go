package test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// publishRules are the rules publish needs in its namespace
// (plugin/publish/README.md): the DNSEndpoint objects it keeps, and the
// Lease that elects the one replica that writes them.
var publishRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"externaldns.k8s.io"}, Resources: []string{"dnsendpoints"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
}

// TestHelmPublishNamespace renders the chart with ci/publish-values.yaml,
// the objects in a namespace of their own and the pods running as an
// existing service account: the Corefile's publish writes in that
// namespace, where the Role and its binding to that account go, and the
// chart makes no service account.
func TestHelmPublishNamespace(t *testing.T) {
	r := renderRelease(t, filepath.Join(chartDir, "ci", "publish-values.yaml"), writeValues(t, `
publish: {namespace: external-dns}
serviceAccount: {create: false, name: coredns}
`))
	deploy := r.only(t)
	corefile := r.corefile(t, deploy)
	if ns, _ := publishNamespace(corefile); ns != "external-dns" {
		t.Errorf("publish writes in namespace %q, want external-dns:\n%s", ns, corefile)
	}
	if sa := deploy.Spec.Template.Spec.ServiceAccountName; sa != "coredns" || len(r.serviceAccounts) != 0 {
		t.Errorf("the pods run as %q, and the chart makes %d service accounts: want coredns, none", sa, len(r.serviceAccounts))
	}
	checkPublishRBAC(t, r, deploy, corefile)
}

// checkPublishRBAC checks what d's pods may do in the API server: with a
// publish block in corefile, they mount their service account's token, and
// a Role in publish's namespace grants exactly publishRules, bound to that
// account (of the release's namespace, default); without one, they mount
// no token and the release has no Role. An account the chart makes is the
// pods'.
func checkPublishRBAC(t *testing.T, r *release, d *appsv1.Deployment, corefile string) {
	t.Helper()
	pod := d.Spec.Template.Spec
	if _, ok := r.serviceAccounts[pod.ServiceAccountName]; len(r.serviceAccounts) != 0 && !ok {
		t.Errorf("the pods run as %q, not the chart's service account", pod.ServiceAccountName)
	}
	token := pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken
	ns, publishing := publishNamespace(corefile)
	if !publishing {
		if token || len(r.roles)+len(r.roleBindings) != 0 {
			t.Errorf("without publish, the pods mount a token (%v) and the release has %d Roles and %d RoleBindings: want none", token, len(r.roles), len(r.roleBindings))
		}
		return
	}
	if !token {
		t.Error("the pods publish, but mount no service account token")
	}
	if len(r.roles) != 1 || len(r.roleBindings) != 1 {
		t.Fatalf("%d Roles and %d RoleBindings, want one of each", len(r.roles), len(r.roleBindings))
	}
	for _, role := range r.roles {
		if role.Namespace != ns || !reflect.DeepEqual(role.Rules, publishRules) {
			t.Errorf("Role %s in namespace %q grants %+v; publish writes in %q and needs %+v", role.Name, role.Namespace, role.Rules, ns, publishRules)
		}
		for _, b := range r.roleBindings {
			want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: pod.ServiceAccountName, Namespace: "default"}}
			if b.Namespace != ns || b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}) || !reflect.DeepEqual(b.Subjects, want) {
				t.Errorf("RoleBinding %s in namespace %q binds %+v to %+v, want Role %s to %+v in %q", b.Name, b.Namespace, b.RoleRef, b.Subjects, role.Name, want, ns)
			}
		}
	}
}

// publishNamespace returns the namespace property of corefile's publish
// block, and whether it has one.
func publishNamespace(corefile string) (string, bool) {
	_, block, found := strings.Cut(corefile, "\n    publish {\n")
	if !found {
		return "", false
	}
	block, _, _ = strings.Cut(block, "\n    }")
	for _, line := range strings.Split(block, "\n") {
		if ns, ok := strings.CutPrefix(strings.TrimSpace(line), "namespace "); ok {
			return ns, true
		}
	}
	return "", true
}
