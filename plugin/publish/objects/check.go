package objects

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ErrNoCRD is Check's error when the API server has no DNSEndpoint
// resource.
var ErrNoCRD = errors.New("the DNSEndpoint CRD (dnsendpoints.externaldns.k8s.io, v1alpha1) is not installed: apply external-dns's CRD")

// ErrNoNamespace is what Check's error wraps when its namespace does not
// exist.
var ErrNoNamespace = errors.New("the namespace does not exist")

// ErrRBAC is what Check's error wraps when the API server does not grant
// one of needs.
var ErrRBAC = errors.New("missing RBAC")

// need is a verb on a resource that publishing needs in its namespace.
type need struct {
	group, resource string
	verbs           []string
}

// needs are what publishing asks of the API server in its namespace: the
// DNSEndpoint objects, and the Lease that elects the replica that writes.
var needs = []need{
	{Resource.Group, Resource.Resource, []string{"get", "list", "create", "update", "delete"}},
	{"coordination.k8s.io", "leases", []string{"get", "create", "update"}},
}

// Check returns nil when the API server of client has the DNSEndpoint
// resource, grants every verb of needs in namespace, and namespace exists;
// else what is wrong, in words: the server unreachable, ErrNoCRD, an error
// wrapping ErrRBAC that names what is not granted, or one wrapping
// ErrNoNamespace.
func Check(ctx context.Context, client kubernetes.Interface, namespace string) error {
	list, err := client.Discovery().ServerResourcesForGroupVersion(Resource.GroupVersion().String())
	switch {
	case apierrors.IsNotFound(err):
		return ErrNoCRD
	case err != nil:
		return fmt.Errorf("the API server does not answer: %w", err)
	case !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == Resource.Resource }):
		return ErrNoCRD
	}
	var missing []string
	for _, n := range needs {
		var denied []string
		for _, verb := range n.verbs {
			review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: namespace, Verb: verb, Group: n.group, Resource: n.resource,
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("asking the API server what this account may do: %w", err)
			}
			if !review.Status.Allowed {
				denied = append(denied, verb)
			}
		}
		if len(denied) > 0 {
			missing = append(missing, fmt.Sprintf("%s %s.%s", strings.Join(denied, ", "), n.resource, n.group))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: this account may not %s in namespace %s", ErrRBAC, strings.Join(missing, "; "), namespace)
	}
	return namespaceExists(ctx, client, namespace)
}

// namespaceExists returns nil when namespace exists. An access review
// grants verbs in a namespace that does not exist, and a list there finds
// nothing: only a write says so. It writes nothing: the Lease it creates is
// a dry run, which the API server checks and admits (its namespace
// included) but does not store; Check has made sure it may create one.
func namespaceExists(ctx context.Context, client kubernetes.Interface, namespace string) error {
	probe := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{GenerateName: "globaladdr-check-"}}
	_, err := client.CoordinationV1().Leases(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w: create namespace %s, or name another with publish's namespace", ErrNoNamespace, namespace)
	case err != nil:
		return fmt.Errorf("creating a Lease in namespace %s (a dry run): %w", namespace, err)
	}
	return nil
}
