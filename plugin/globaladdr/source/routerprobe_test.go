package source

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/router"
)

func TestRouterSourceSetup(t *testing.T) {
	tests := []struct {
		input   string
		wantErr string // "" for a valid Corefile; else the error at line 2 contains it
		names   string // the probers' names of a valid one
	}{
		{"from upnp", "", "upnp"},
		{"from upnp http://192.168.0.1:5000/rootDesc.xml", "", "upnp http://192.168.0.1:5000/rootDesc.xml"},
		{"from natpmp", "", "natpmp"},
		{"from natpmp 192.168.0.1", "", "natpmp 192.168.0.1"},
		{"from pcp", "", "pcp"},
		{"from pcp 192.168.0.1", "", "pcp 192.168.0.1"},
		{"from pcp fd00::1", "", "pcp fd00::1"},

		{"from upnp a b", `upnp takes at most one URL, the device description's, after "b"`, ""},
		{"from upnp 192.168.0.1:5000", `upnp URL: "192.168.0.1:5000" is not an http URL`, ""},
		{"from upnp ftp://192.168.0.1/rootDesc.xml", `is not an http URL`, ""},
		{"from upnp http:///rootDesc.xml", `is not an http URL`, ""},
		{"from natpmp 192.168.0.1 192.168.0.2", `natpmp takes at most one GATEWAY, after "192.168.0.2"`, ""},
		{"from natpmp fd00::1", `natpmp GATEWAY: "fd00::1" is not an IPv4 address`, ""},
		{"from natpmp router.lan", `natpmp GATEWAY: "router.lan" is not an IPv4 address`, ""},
		{"from pcp fe80::1%eth0", `pcp SERVER: "fe80::1%eth0" is not an IPv4 or IPv6 address`, ""},
		{"from pcp 1.2.3.4 5.6.7.8", `pcp takes at most one SERVER`, ""},
	}
	for _, tc := range tests {
		input := "globaladdr {\n " + tc.input + "\n}"
		set, err := newSet(caddy.NewTestController("dns", input))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: unexpected error %v", tc.input, err)
		case tc.wantErr == "":
			var names []string
			for _, f := range set.feeds {
				names = append(names, f.line.names...)
			}
			if got := strings.Join(names, ", "); got != tc.names {
				t.Errorf("%q: probers %s, want %s", tc.input, got, tc.names)
			}
		case err == nil:
			t.Errorf("%q: no error, want one containing %q", tc.input, tc.wantErr)
		case !strings.Contains(err.Error(), "Testfile:2 ") || !strings.Contains(err.Error(), tc.wantErr):
			t.Errorf("%q: error %q, want one at Testfile:2 containing %q", tc.input, err, tc.wantErr)
		}
	}
}

func TestRouterError(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{router.ErrNoUsableAddress, ReasonNoAddress},
		{fmt.Errorf("PCP MAP to 10.0.0.1: %w", router.ErrNoUsableAddress), ReasonNoAddress},
		{router.ErrMalformed, ReasonMalformed},
		{router.ErrRefused, ReasonRejected},
		{router.ErrNotFound, ReasonDiscovery},
		{errors.New("something else"), ReasonOther},
	} {
		err := routerError(tc.err)
		if got := reasonOf(err); got != tc.reason || err.Error() != tc.err.Error() {
			t.Errorf("routerError(%v) = %v of reason %s; want the same words, reason %s", tc.err, err, got, tc.reason)
		}
	}
}
