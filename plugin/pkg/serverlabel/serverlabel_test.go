package serverlabel

import (
	"slices"
	"testing"

	"github.com/coredns/coredns/core/dnsserver"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		hosts []string
		want  []string
	}{
		{[]string{""}, []string{"dns://:1053"}},
		{[]string{"127.0.0.1", "::1"}, []string{"dns://127.0.0.1:1053", "dns://[::1]:1053"}},
	} {
		cfg := &dnsserver.Config{Transport: "dns", Port: "1053", ListenHosts: tc.hosts}
		if got := Of(cfg); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.hosts, got, tc.want)
		}
	}
}
