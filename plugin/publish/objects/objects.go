// Package objects keeps external-dns's DNSEndpoint objects
// (externaldns.k8s.io/v1alpha1) of one namespace equal to the endpoints
// they should hold, writing only those whose content differs, and tells
// whether the API server lets it: the CRD installed, and the RBAC granted.
package objects

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Resource is the DNSEndpoint resource, as external-dns's CRD defines it.
var Resource = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsendpoints"}

// kind is the objects' kind.
const kind = "DNSEndpoint"

// Set is the objects of one publication in one namespace: those that carry
// all of Selector.
type Set struct {
	Client    dynamic.Interface
	Namespace string
	// Selector are the labels that tell the set's objects from others.
	Selector map[string]string
	// Labels are every object's labels: Selector's, and more.
	Labels map[string]string
}

// Writes counts what Apply wrote, by operation.
type Writes struct {
	Created, Updated, Deleted int
}

// spec is a DNSEndpoint's spec.
type spec struct {
	Endpoints []wire.Endpoint `json:"endpoints"`
}

// Apply makes the set's objects hold want, object name to endpoints: it
// creates the objects missing, then updates those whose endpoints or labels
// differ, then deletes the set's objects want does not name. It leaves
// alone an object equal to what it should be, and the status that
// external-dns writes. The first error ends it; what it wrote until then
// stays, and the next Apply finishes the work.
func (s *Set) Apply(ctx context.Context, want map[string][]wire.Endpoint) (Writes, error) {
	var w Writes
	client := s.Client.Resource(Resource).Namespace(s.Namespace)
	list, err := client.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(s.Selector).String()})
	if err != nil {
		return w, fmt.Errorf("listing the DNSEndpoint objects in namespace %s: %w", s.Namespace, err)
	}
	have := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		have[list.Items[i].GetName()] = &list.Items[i]
	}
	// The objects missing first, then those that differ, then those no
	// longer wanted: when the endpoints spread over more objects, a name
	// moves into a new object before it leaves its old one, so a write cut
	// short leaves it in two, never in none.
	for _, creating := range []bool{true, false} {
		for _, name := range slices.Sorted(maps.Keys(want)) {
			old := have[name]
			if creating != (old == nil) || old != nil && s.same(old, want[name]) {
				continue
			}
			obj, err := s.object(name, want[name])
			if err != nil {
				return w, err
			}
			if creating {
				_, err = client.Create(ctx, obj, metav1.CreateOptions{})
				if apierrors.IsAlreadyExists(err) {
					err = s.adopt(ctx, obj)
				}
			} else {
				obj.SetResourceVersion(old.GetResourceVersion())
				_, err = client.Update(ctx, obj, metav1.UpdateOptions{})
			}
			if err != nil {
				return w, fmt.Errorf("writing DNSEndpoint %s/%s: %w", s.Namespace, name, err)
			}
			if creating {
				w.Created++
			} else {
				w.Updated++
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[name]; ok {
			continue
		}
		err := client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: new(have[name].GetResourceVersion())}})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return w, fmt.Errorf("deleting DNSEndpoint %s/%s: %w", s.Namespace, name, err)
		}
		w.Deleted++
	}
	return w, nil
}

// adopt makes obj, whose name an object without the set's labels holds
// (written by hand, or by a publication that selected its objects
// otherwise), what it should be: it takes the object over.
func (s *Set) adopt(ctx context.Context, obj *unstructured.Unstructured) error {
	client := s.Client.Resource(Resource).Namespace(s.Namespace)
	old, err := client.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(old.GetResourceVersion())
	_, err = client.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// Retire deletes the objects of the set's namespace that carry selector
// and that old says are of a set this one replaced, and returns how many it
// deleted. Called once the set is written, it moves every name from the old
// objects to the new ones without a moment in none.
func (s *Set) Retire(ctx context.Context, selector map[string]string, old func(name string, labels map[string]string) bool) (int, error) {
	client := s.Client.Resource(Resource).Namespace(s.Namespace)
	list, err := client.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String()})
	if err != nil {
		return 0, fmt.Errorf("listing the DNSEndpoint objects in namespace %s: %w", s.Namespace, err)
	}
	deleted := 0
	for _, obj := range list.Items {
		if !old(obj.GetName(), obj.GetLabels()) {
			continue
		}
		err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: new(obj.GetResourceVersion())}})
		if err != nil && !apierrors.IsNotFound(err) {
			return deleted, fmt.Errorf("deleting DNSEndpoint %s/%s: %w", s.Namespace, obj.GetName(), err)
		}
		if err == nil {
			deleted++
		}
	}
	return deleted, nil
}

// object returns the object name should be, holding eps.
func (s *Set) object(name string, eps []wire.Endpoint) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec{Endpoints: nonNil(eps)})
	if err != nil {
		return nil, fmt.Errorf("DNSEndpoint %s: %w", name, err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": content}}
	obj.SetAPIVersion(Resource.GroupVersion().String())
	obj.SetKind(kind)
	obj.SetName(name)
	obj.SetNamespace(s.Namespace)
	obj.SetLabels(s.Labels)
	return obj, nil
}

// same reports whether obj holds eps and carries the set's labels as they
// are (a label added by hand, or one the Corefile no longer gives, makes it
// differ too).
func (s *Set) same(obj *unstructured.Unstructured, eps []wire.Endpoint) bool {
	if !maps.Equal(obj.GetLabels(), s.Labels) {
		return false
	}
	content, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return false
	}
	var held spec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, &held); err != nil {
		return false
	}
	return reflect.DeepEqual(nonNil(held.Endpoints), nonNil(eps))
}

// nonNil returns eps, or an empty list for none: an object always has its
// list of endpoints, and two empty lists are the same.
func nonNil(eps []wire.Endpoint) []wire.Endpoint {
	if eps == nil {
		return []wire.Endpoint{}
	}
	return eps
}
