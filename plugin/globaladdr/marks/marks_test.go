package marks

import (
	"slices"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"
)

func TestOf(t *testing.T) {
	m := New("/skydns", []string{"example.org."})
	m.Set(map[string][]byte{
		"/skydns/org/example/app/x1":    []byte(`{"host":"192.168.0.51"}`),
		"/skydns/org/example/open/x1":   []byte(`{"host":"192.168.0.52","globaladdr-external":"true"}`),
		"/skydns/org/example/open/x2":   []byte(`{"host":"192.168.0.53","globaladdr-external":"true"}`),
		"/skydns/org/example/Shut":      []byte(`{"host":"192.168.0.54","globaladdr-external":"false"}`),
		"/skydns/org/example/odd":       []byte(`{"host":"192.168.0.55","globaladdr-external":"yes"}`),
		"/skydns/org/example/broken/x1": []byte(`{"host":`),
		"/other/org/example/outside":    []byte(`{"host":"192.168.0.56","globaladdr-external":"false"}`),
	})
	for _, tc := range []struct {
		name string
		want horizon.Mark
		ok   bool
	}{
		{"x1.app.example.org.", horizon.Unmarked, true},
		{"app.example.org.", horizon.Unmarked, true},
		{"open.example.org.", horizon.Exposed, true},
		{"shut.example.org.", horizon.Withheld, true},
		{"odd.example.org.", horizon.Withheld, true},
		{"broken.example.org.", horizon.Withheld, true},
		{"example.org.", horizon.Withheld, true},
		{"*.example.org.", horizon.Withheld, true},
		{"x1.*.example.org.", horizon.Withheld, true},
		{"*.open.example.org.", horizon.Exposed, true},
		{"*.", horizon.Withheld, true},
		{"outside.example.org.", horizon.Withheld, false},
		{"none.example.org.", horizon.Withheld, false},
	} {
		if got, ok := m.Of(tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("Of(%s) = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}

	// Changes keep the counts of every name above.
	m.put("/skydns/org/example/Shut", []byte(`{"host":"192.168.0.54","globaladdr-external":"true"}`))
	m.remove("/skydns/org/example/odd")
	m.remove("/skydns/org/example/broken/x1")
	if got, _ := m.Of("example.org."); got != horizon.Unmarked {
		t.Errorf("the apex after the changes: %v, want unmarked", got)
	}
	m.remove("/skydns/org/example/app/x1")
	if got, _ := m.Of("example.org."); got != horizon.Exposed {
		t.Errorf("the apex with only names marked true below: %v, want exposed", got)
	}
	if _, ok := m.Of("app.example.org."); ok {
		t.Error("app.example.org. has a mark after its key was deleted")
	}
	m.remove("/skydns/org/example/open/x1")
	m.remove("/skydns/org/example/open/x2")
	m.remove("/skydns/org/example/Shut")
	if len(m.below) != 0 || len(m.keys) != 0 {
		t.Errorf("counts left after every key was deleted: %v %v", m.below, m.keys)
	}
}

func TestNotLoaded(t *testing.T) {
	m := New("/skydns/", []string{"."})
	if _, ok := m.Of("example.org."); ok || m.Loaded() {
		t.Error("marks known before the tree was read")
	}
	m.Set(nil)
	select {
	case <-m.Read():
	default:
		t.Error("Read not closed once the tree was read")
	}
}

func TestZones(t *testing.T) {
	m := New("/skydns", []string{"example.org.", "Sub.Example.org.", "example.net.", "example-x.org.", "."})
	if want := []string{"/skydns/"}; !slices.Equal(m.zones, want) {
		t.Errorf("zones under the root's: %q, want %q", m.zones, want)
	}
	m = New("/skydns", []string{"example.org.", "Sub.Example.org.", "example.net.", "example-x.org."})
	if want := []string{"/skydns/net/example/", "/skydns/org/example-x/", "/skydns/org/example/"}; !slices.Equal(m.zones, want) {
		t.Errorf("zones: %q, want %q", m.zones, want)
	}
	m.Set(map[string][]byte{
		"/skydns/org/example/sub/www": []byte(`{"host":"192.168.0.51","globaladdr-external":"true"}`),
		"/skydns/org/examplex/www":    []byte(`{"host":"192.168.0.52"}`),
		"/skydns/org/example":         []byte(`{"host":"192.168.0.53"}`),
	})
	if got, ok := m.Of("www.sub.example.org."); !ok || got != horizon.Exposed {
		t.Errorf("a key of a zone below another: %v, %v", got, ok)
	}
	for _, name := range []string{"www.examplex.org."} {
		if _, ok := m.Of(name); ok {
			t.Errorf("%s, outside the zones' subtrees, has a mark", name)
		}
	}
}

// TestOfRoute checks that a route other than "address" withholds a name
// behind the etcd plugin, where the view has no tunnel (fail closed).
func TestOfRoute(t *testing.T) {
	m := New("/skydns", []string{"example.org."})
	m.Set(map[string][]byte{
		"/skydns/org/example/direct/x1": []byte(`{"host":"192.168.0.51","globaladdr-target":"address"}`),
		"/skydns/org/example/tun/x1":    []byte(`{"host":"192.168.0.52","globaladdr-external":"true","globaladdr-target":"tunnel"}`),
		"/skydns/org/example/lost/x1":   []byte(`{"host":"192.168.0.53","globaladdr-target":"vpn"}`),
	})
	for name, want := range map[string]horizon.Mark{
		"direct.example.org.": horizon.Unmarked,
		"tun.example.org.":    horizon.Withheld,
		"lost.example.org.":   horizon.Withheld,
	} {
		if got, ok := m.Of(name); got != want || !ok {
			t.Errorf("Of(%s) = %v, %v; want %v", name, got, ok, want)
		}
	}
}
