package objects

import (
	"testing"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Apply and Check talk to an API server: test/publish_test.go runs them
// against a real one. This tests what Apply decides alone: whether an
// object as the API server gives it back holds what it should.

// roundTrip returns obj as a client reads it back: through JSON.
func roundTrip(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	b, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back := &unstructured.Unstructured{}
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestSame(t *testing.T) {
	s := &Set{Namespace: "dns", Selector: map[string]string{"a": "1"}, Labels: map[string]string{"a": "1", "b": "2"}}
	eps := []wire.Endpoint{
		{DNSName: "app.example.com", RecordType: "A", Targets: []string{"203.0.113.10"}, RecordTTL: 900},
		{DNSName: "txt.example.com", RecordType: "TXT", Targets: []string{`"say \"hi\""`, `"a" "b"`}, RecordTTL: 2147483647},
	}
	obj, err := s.object("globaladdr.example.com.53.0", eps)
	if err != nil {
		t.Fatal(err)
	}
	if obj.GetKind() != "DNSEndpoint" || obj.GetAPIVersion() != "externaldns.k8s.io/v1alpha1" || obj.GetNamespace() != "dns" {
		t.Errorf("object %s %s in %q", obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace())
	}
	back := roundTrip(t, obj)
	if !s.same(back, eps) {
		t.Errorf("an object read back differs from the endpoints it was written with:\n%v", back.Object)
	}

	changed := []wire.Endpoint{eps[0], {DNSName: "txt.example.com", RecordType: "TXT", Targets: []string{`"a" "b"`}, RecordTTL: 2147483647}}
	if s.same(back, changed) {
		t.Error("an object the same as other endpoints")
	}
	relabeled := &Set{Namespace: "dns", Selector: s.Selector, Labels: map[string]string{"a": "1"}}
	if relabeled.same(back, eps) {
		t.Error("an object the same though the set's labels differ from its own")
	}
	if s.same(&unstructured.Unstructured{Object: map[string]any{"spec": "nothing"}}, eps) {
		t.Error("an object with no endpoints the same as endpoints")
	}

	empty, err := s.object("globaladdr.example.com.53.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if back := roundTrip(t, empty); !s.same(back, nil) || !s.same(back, []wire.Endpoint{}) {
		t.Errorf("an empty object read back differs from no endpoints:\n%v", back.Object)
	}
}
