package etcdtree

import "testing"

// TestHolds checks which keys are a zone's when lan.example.com, inside it,
// is a zone too: its keys are its own.
func TestHolds(t *testing.T) {
	// lan.example.com is a zone of the plugin too: its keys are its own.
	k := Keys{Key: "/skydns/com/example", Inner: []string{"/skydns/com/example/lan"}}
	for key, want := range map[string]bool{
		"/skydns/com/example":         true,
		"/skydns/com/example/app":     true,
		"/skydns/com/example/lan":     false,
		"/skydns/com/example/lan/app": false,
		"/skydns/com/example/lane/x":  true,
		"/skydns/com/example-shop/x":  false,
		"/skydns/com/example.org/x":   false,
		"/skydns/com/exampl":          false,
		"/skydns/com/example0/beyond": false,
	} {
		if got := k.Holds([]byte(key)); got != want {
			t.Errorf("Holds(%q) = %v", key, got)
		}
	}
}
