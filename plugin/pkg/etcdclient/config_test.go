package etcdclient

import (
	"slices"
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

// parse reads the properties of a block as a plugin's setup hands them on.
func parse(t *testing.T, input string) (Config, error) {
	t.Helper()
	var cfg Config
	c := caddy.NewTestController("dns", input)
	for c.Next() {
		for c.NextBlock() {
			if err := cfg.Parse(c, c.Val(), c.RemainingArgs()); err != nil {
				return cfg, err
			}
		}
	}
	return cfg, nil
}

func TestParseEndpoints(t *testing.T) {
	for input, want := range map[string][]string{
		"x {\n endpoint http://a:2379\n}":                                      {"http://a:2379"},
		"x {\n endpoint http://a:2379 http://b:2379\n}":                        {"http://a:2379", "http://b:2379"},
		"x {\n endpoint \"https://a:2379 https://b:2379,https://c:2379\"\n}":   {"https://a:2379", "https://b:2379", "https://c:2379"},
		"x {\n endpoint \"https://a:2379,https://b:2379, https://c:2379 \"\n}": {"https://a:2379", "https://b:2379", "https://c:2379"},
		"x {\n endpoint 10.0.0.1:2379 unix:///run/etcd.sock\n}":                {"10.0.0.1:2379", "unix:///run/etcd.sock"},
	} {
		cfg, err := parse(t, input)
		if err != nil || !slices.Equal(cfg.Endpoints, want) || cfg.First() != "endpoint" {
			t.Errorf("%q: %v %v, want %v", input, cfg.Endpoints, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for input, want := range map[string]string{
		"x {\n endpoint\n}":                     "endpoint needs at least one URL",
		"x {\n endpoint \" , \"\n}":             "endpoint needs at least one URL",
		"x {\n endpoint ftp://a:2379\n}":        `"ftp://a:2379" is not an etcd endpoint URL`,
		"x {\n endpoint \"http://a:2379 b\"\n}": `"b" is not an etcd endpoint URL`,
		"x {\n credentials root\n}":             "credentials needs USER and PASSWORD",
		"x {\n plaintext_credentials yes\n}":    "Wrong argument count",
		"x {\n tls /nonexistent.crt\n}":         "/nonexistent.crt",
		"x {\n credentials root \"\"\n}":        "credentials needs USER and PASSWORD",
		"x {\n tls \"\" /a.key /ca.crt\n}":      "tls needs CERT and KEY together",
	} {
		if _, err := parse(t, input); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Testfile:2") {
			t.Errorf("%q: %v, want an error at Testfile:2 saying %q", input, err, want)
		}
	}
}

// TestParseUnset leaves out a tls and a credentials whose arguments are all
// empty, as unset placeholders expand.
func TestParseUnset(t *testing.T) {
	cfg, err := parse(t, "x {\n tls \"\" \"\" \"\"\n credentials \"\" \"\"\n}")
	if err != nil || cfg.Given() || cfg.TLS != nil || cfg.Username != "" || cfg.Password != "" {
		t.Errorf("%+v %v, want none given", cfg, err)
	}
}

// TestCheck refuses credentials over an endpoint that does not encrypt,
// unless plaintext_credentials allows them.
func TestCheck(t *testing.T) {
	for input, want := range map[string]string{
		"x {\n credentials u p\n}": "credentials over http://localhost:2379 would send the password in clear",
		"x {\n endpoint https://a:2379 http://b:2379\n credentials u p\n}":          "credentials over http://b:2379",
		"x {\n endpoint b:2379\n credentials u p\n}":                                "credentials over b:2379",
		"x {\n endpoint http://b:2379\n credentials u p\n plaintext_credentials\n}": "",
		"x {\n endpoint https://a:2379 unixs:///run/etcd.sock\n credentials u p\n}": "",
		"x {\n endpoint http://a:2379\n}":                                           "",
	} {
		cfg, err := parse(t, input)
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.Check()
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", input, err, want)
		}
	}
}
