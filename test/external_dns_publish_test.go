package test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestExternalDNSPublishChart renders external-dns's own chart, as
// TestExternalDNSWebhookChart does, with
// corefile-examples/kubernetes/external-dns-publish-values.yaml: the second
// external-dns, which publishes the DNSEndpoint objects of publish. It
// checks what those objects need of it: the crd source alone, of
// DNSEndpoints, in one namespace, only those publish labels; TXT among the
// managed record types (external-dns's default would leave the view's TXT
// records out); a TXT registry whose owner id is not the first
// external-dns's (external-dns.yaml's, and the webhook values'); Route53's
// public zones; and in that namespace, a Role that reads dnsendpoints and
// updates their status, bound to the pod's service account, with nothing
// cluster-wide.
func TestExternalDNSPublishChart(t *testing.T) {
	chart, version := externalDNSChart(t)
	r := decodeRelease(t, renderExternalDNS(t, chart, externalDNSPublishValues))
	d := r.only(t)
	edns := podContainer(t, d, "external-dns")
	if !strings.HasSuffix(edns.Image, ":"+version) {
		t.Errorf("external-dns's container runs %s, the tests external-dns %s", edns.Image, version)
	}
	checkArgs(t, edns, "--crd-source-apiversion=externaldns.k8s.io/v1alpha1", "--crd-source-kind=DNSEndpoint",
		"--label-filter=app.kubernetes.io/managed-by=globaladdr", "--policy=sync", "--registry=txt",
		"--provider=aws", "--aws-zone-type=public")
	args := flagValues(edns)
	if !slices.Equal(args["source"], []string{"crd"}) {
		t.Errorf("external-dns reads the sources %q, want crd alone", args["source"])
	}
	for _, typ := range []string{"A", "AAAA", "CNAME", "TXT"} {
		if !slices.Contains(args["managed-record-types"], typ) {
			t.Errorf("external-dns manages the record types %q, not %s", args["managed-record-types"], typ)
		}
	}
	first := []corev1.Container{
		readManifests(t).deployment(t, "external-dns").Spec.Template.Spec.Containers[0],
		podContainer(t, externalDNSDeployment(t, renderExternalDNS(t, chart, externalDNSWebhookValues)), "external-dns"),
	}
	for _, c := range first {
		if owner := flagValues(c)["txt-owner-id"]; len(args["txt-owner-id"]) != 1 || slices.Equal(owner, args["txt-owner-id"]) {
			t.Errorf("the second external-dns's owner id %q, the first's %q: want one of its own", args["txt-owner-id"], owner)
		}
	}
	if len(args["namespace"]) != 1 {
		t.Fatalf("external-dns reads the namespaces %q, want publish's alone", args["namespace"])
	}
	checkCRDSourceRBAC(t, r, args["namespace"][0], d.Spec.Template.Spec.ServiceAccountName)
}

// checkCRDSourceRBAC checks that r, external-dns's chart rendered in the
// namespace default, grants its service account sa what the crd source
// needs in namespace ns, with one Role and its binding there: get, list and
// watch on dnsendpoints, update on dnsendpoints/status.
func checkCRDSourceRBAC(t *testing.T, r *release, ns, sa string) {
	t.Helper()
	if len(r.roles) != 1 || len(r.roleBindings) != 1 {
		t.Fatalf("%d Roles and %d RoleBindings, want one of each", len(r.roles), len(r.roleBindings))
	}
	for _, role := range r.roles {
		for resource, verbs := range map[string][]string{"dnsendpoints": {"get", "list", "watch"}, "dnsendpoints/status": {"update"}} {
			for _, verb := range verbs {
				if role.Namespace != ns || !grants(role.Rules, "externaldns.k8s.io", resource, verb) {
					t.Errorf("Role %s in namespace %q does not grant %s on %s in %q: %+v", role.Name, role.Namespace, verb, resource, ns, role.Rules)
				}
			}
		}
		for _, b := range r.roleBindings {
			want := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: "default"}}
			if b.Namespace != ns || b.RoleRef.Kind != "Role" || b.RoleRef.Name != role.Name || !slices.Equal(b.Subjects, want) {
				t.Errorf("RoleBinding %s in namespace %q binds %+v to %+v, want Role %s to %+v in %q", b.Name, b.Namespace, b.RoleRef, b.Subjects, role.Name, want, ns)
			}
		}
	}
}

// grants reports whether rules allow verb on resource of the API group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

// flagValues returns the values of container c's --NAME=VALUE arguments, by
// NAME, in order.
func flagValues(c corev1.Container) map[string][]string {
	values := map[string][]string{}
	for _, arg := range c.Args {
		if name, value, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "="); ok {
			values[name] = append(values[name], value)
		}
	}
	return values
}
