package rrl

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/internal/setuptest"
)

func TestSetup(t *testing.T) {
	tests := []setuptest.Case{
		{`rrl`, false, ""},
		{"rrl {\n responses-per-second 10\n}", false, ""},
		{"rrl {\n responses-per-second 0\n nodata-per-second 1000\n nxdomains-per-second 5\n referrals-per-second 5\n errors-per-second 5\n all-per-second 100\n}", false, ""},
		{"rrl {\n window 1\n slip 0\n ipv4-prefix-length 32\n ipv6-prefix-length 0\n}", false, ""},
		{"rrl {\n window 3600\n slip 10\n max-table-size 1\n}", false, ""},
		{"rrl {\n exempt-clients 192.0.2.0/24 2001:db8::/32 198.51.100.7\n exempt-clients ::1\n log-only\n}", false, ""},

		{`rrl example.com`, true, `rrl takes no arguments, got "example.com"`},
		{"rrl\nrrl", true, `rrl is given twice in this server block`},
		{"rrl {\n rate 10\n}", true, `unknown option "rate"`},
		{"rrl {\n qps-scale 250\n}", true, `unknown option "qps-scale"`},
		{"rrl {\n responses-per-second\n}", true, `Wrong argument count`},
		{"rrl {\n responses-per-second 5 6\n}", true, `Wrong argument count`},
		{"rrl {\n responses-per-second -1\n}", true, `responses-per-second "-1" is not a whole number from 0 to 1000`},
		{"rrl {\n responses-per-second 1001\n}", true, `responses-per-second "1001" is not a whole number from 0 to 1000`},
		{"rrl {\n responses-per-second 5.5\n}", true, `responses-per-second "5.5" is not a whole number`},
		{"rrl {\n nodata-per-second ten\n}", true, `nodata-per-second "ten" is not a whole number`},
		{"rrl {\n nxdomains-per-second 2000\n}", true, `nxdomains-per-second "2000" is not a whole number`},
		{"rrl {\n referrals-per-second x\n}", true, `referrals-per-second "x" is not a whole number`},
		{"rrl {\n errors-per-second -5\n}", true, `errors-per-second "-5" is not a whole number`},
		{"rrl {\n all-per-second 1e3\n}", true, `all-per-second "1e3" is not a whole number`},
		{"rrl {\n window 0\n}", true, `window "0" is not a whole number from 1 to 3600`},
		{"rrl {\n window 3601\n}", true, `window "3601" is not a whole number from 1 to 3600`},
		{"rrl {\n window 15s\n}", true, `window "15s" is not a whole number`},
		{"rrl {\n window\n}", true, `Wrong argument count`},
		{"rrl {\n slip 11\n}", true, `slip "11" is not a whole number from 0 to 10`},
		{"rrl {\n slip -1\n}", true, `slip "-1" is not a whole number from 0 to 10`},
		{"rrl {\n ipv4-prefix-length 33\n}", true, `ipv4-prefix-length "33" is not a whole number from 0 to 32`},
		{"rrl {\n ipv6-prefix-length 129\n}", true, `ipv6-prefix-length "129" is not a whole number from 0 to 128`},
		{"rrl {\n ipv6-prefix-length /56\n}", true, `ipv6-prefix-length "/56" is not a whole number`},
		{"rrl {\n max-table-size 0\n}", true, `max-table-size "0" is not a whole number from 1 to 10000000`},
		{"rrl {\n max-table-size 10000001\n}", true, `max-table-size "10000001" is not a whole number`},
		{"rrl {\n exempt-clients\n}", true, `Wrong argument count`},
		{"rrl {\n exempt-clients 10.0.0.0/33\n}", true, `exempt-clients "10.0.0.0/33" is not an address or prefix`},
		{"rrl {\n exempt-clients localhost\n}", true, `exempt-clients "localhost" is not an address or prefix`},
		{"rrl {\n exempt-clients fe80::1%eth0\n}", true, `exempt-clients "fe80::1%eth0" is not an address or prefix`},
		{"rrl {\n exempt-clients ::ffff:192.0.2.1\n}", true, `exempt-clients "::ffff:192.0.2.1" is not an address or prefix`},
		{"rrl {\n log-only yes\n}", true, `Wrong argument count`},
	}
	setuptest.Run(t, "rrl", setup, tests)
}

func TestSetupErrorNamesLine(t *testing.T) {
	c := caddy.NewTestController("dns", "rrl {\n responses-per-second 10\n\n window 0\n}")
	err := setup(c)
	if err == nil || !strings.Contains(err.Error(), "Testfile:4 ") || !strings.Contains(err.Error(), `"0"`) {
		t.Fatalf("expected an error at Testfile:4 naming \"0\", got %v", err)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		input string
		want  config
	}{
		{`rrl`, config{window: 15, slip: 2, ipv4Length: 24, ipv6Length: 56, maxTableSize: 20000}},
		{
			"rrl {\n responses-per-second 10\n}",
			config{rates: [classes]int{10, 10, 10, 10, 10, 0}, window: 15, slip: 2, ipv4Length: 24, ipv6Length: 56, maxTableSize: 20000},
		},
		{
			"rrl {\n nxdomains-per-second 3\n responses-per-second 10\n errors-per-second 0\n all-per-second 50\n}",
			config{rates: [classes]int{10, 10, 3, 10, 0, 50}, window: 15, slip: 2, ipv4Length: 24, ipv6Length: 56, maxTableSize: 20000},
		},
		{
			"rrl {\n window 5\n slip 0\n ipv4-prefix-length 32\n ipv6-prefix-length 64\n max-table-size 100\n exempt-clients 192.0.2.9/24 ::1\n log-only\n}",
			config{window: 5, slip: 0, ipv4Length: 32, ipv6Length: 64, maxTableSize: 100, logOnly: true,
				exempt: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("::1/128")}},
		},
	}
	for _, tc := range tests {
		got, err := parse(caddy.NewTestController("dns", tc.input))
		if err != nil {
			t.Errorf("%q: %v", tc.input, err)
			continue
		}
		if !slices.Equal(got.exempt, tc.want.exempt) {
			t.Errorf("%q: exempt %v, want %v", tc.input, got.exempt, tc.want.exempt)
		}
		got.exempt, tc.want.exempt = nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\ngot  %+v\nwant %+v", tc.input, got, tc.want)
		}
	}
}
