package publish

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// zoneNames are zones and server block keys whose names must become valid
// Kubernetes names and label values.
var zoneNames = []string{
	"example.com.",
	"Example.COM",
	".",
	"",
	"xn--bcher-kva.example.",
	"_tcp.example.com.",
	"a._b.example.com.",
	"a-.-b.example.com.",
	`a\.b.example.com.`,
	`a\032b.example.com.`,
	"*.example.com.",
	"example.com:53",
	"[::1]:53",
	"tls://example.com:853",
	strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61) + ".",
	strings.Repeat("a.", 126),
	strings.Repeat("a-", 40) + "a.example.com.",
}

func TestNameOf(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"example.com.", 63, "example.com"},
		{"Example.COM", 63, "example.com"},
		{".", 63, "root"},
		{"", 63, "root"},
		{"example.com:53", 63, "example.com-53"},
		{"_acme.example.com.", 63, "acme.example.com"},
		{"a_b.example.com.", 63, "a-b.example.com"},
		{"a._b.example.com.", 63, "a.b.example.com"},
		{"example.com.", 7, "example"},
		{"example.com.", 8, "example"},
		{"ab-cd.example", 3, "ab"},
	} {
		if got := nameOf(tc.in, tc.max); got != tc.want {
			t.Errorf("nameOf(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestObjectName(t *testing.T) {
	if got, want := objectName(setOf("Example.COM.", ""), 3), "globaladdr.example.com.3"; got != want {
		t.Errorf("objectName = %q, want %q", got, want)
	}
	if got, want := leaseName(setOf("example.com", "")), "globaladdr.example.com"; got != want {
		t.Errorf("leaseName = %q, want %q", got, want)
	}
	// Zones that nameOf makes one name get names that differ.
	seen := map[string]string{}
	for _, zone := range []string{"a_b.example.com.", "a-b.example.com.", "a.b.example.com.", "a._b.example.com."} {
		for _, set := range []string{setOf(zone, ""), setOf(zone, "home")} {
			name := objectName(set, 0)
			if other, ok := seen[name]; ok {
				t.Errorf("sets %q and %q share the object name %q", other, set, name)
			}
			seen[name] = set
			if label := labelsOf(set, zone)[setLabel]; seen[label] != "" && seen[label] != set {
				t.Errorf("sets %q and %q share the label %s=%q", seen[label], set, setLabel, label)
			} else {
				seen[label] = set
			}
		}
	}
	for _, zone := range zoneNames {
		for _, name := range []string{objectName(setOf(zone, ""), 1023), objectName(setOf(zone, "home"), 1023), leaseName(setOf(zone, ""))} {
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("zone %q: %q is no Kubernetes name: %s", zone, name, strings.Join(errs, "; "))
			}
		}
	}
}

func TestLabelsOf(t *testing.T) {
	want := map[string]string{managedByLabel: managedBy, zoneLabel: "example.com", setLabel: "example.com"}
	got := labelsOf(setOf("Example.com", ""), "Example.com")
	if len(got) != len(want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
	for _, zone := range zoneNames {
		for key, value := range labelsOf(setOf(zone, "home"), zone) {
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				t.Errorf("label key %q: %s", key, strings.Join(errs, "; "))
			}
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 || value == "" {
				t.Errorf("zone %q: label %s=%q is no label value: %s", zone, key, value, strings.Join(errs, "; "))
			}
		}
	}
}

// TestOldSet checks which objects count as the old set of a zone, which a
// publication deletes once its own set is written.
func TestOldSet(t *testing.T) {
	selector, old := oldSet("example.com.")
	if want := map[string]string{managedByLabel: managedBy, zoneLabel: "example.com"}; len(selector) != len(want) || selector[zoneLabel] != want[zoneLabel] || selector[managedByLabel] != managedBy {
		t.Errorf("selector %v, want %v", selector, want)
	}
	withBlock := map[string]string{blockLabel: "example.com-53"}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"globaladdr.example.com.53.0", withBlock, true},
		{"globaladdr.example.com.5353.12", withBlock, true},
		{"globaladdr.example.com.53.0", nil, false},
		{"globaladdr.example.com.0", withBlock, false},
		{"globaladdr.sub.example.com.53.0", withBlock, false},
		{objectName(setOf("example.com.", ""), 0), labelsOf(setOf("example.com.", ""), "example.com."), false},
	} {
		if got := old(tc.name, tc.labels); got != tc.want {
			t.Errorf("%s %v: old %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}
