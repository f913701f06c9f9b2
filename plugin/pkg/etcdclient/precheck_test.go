package etcdclient

import (
	"strings"
	"testing"

	"github.com/coredns/caddy"
)

func TestCheckCorefile(t *testing.T) {
	for corefile, want := range map[string]string{
		"a {\n etcd a {\n  endpoint https://e:2379\n  credentials u p\n }\n}":                                   "",
		"a {\n etcd a {\n  endpoint http://e:2379\n  credentials u p\n }\n}":                                    "plugin/etcd: Corefile:4 - Error during parsing: server block a: credentials over http://e:2379",
		"a {\n etcd a {\n  credentials u p\n }\n}":                                                              "credentials over http://localhost:2379",
		"a {\n etcd a {\n  endpoint http://e:2379\n  credentials u p\n  plaintext_credentials\n }\n}":           "etcd has no plaintext_credentials",
		"a {\n etcdzone {\n  endpoint http://e:2379\n  credentials u p\n  plaintext_credentials\n }\n}":         "",
		"a {\n etcdzone {\n  endpoint http://e:2379\n  credentials {$NONE_SET} {$NONE_SET}\n }\n}":              "",
		"a {\n globaladdr {\n  from etcd /k\n  endpoint https://e:2379,http://f:2379\n  credentials u p\n }\n}": "plugin/globaladdr: Corefile:5",
		"a b {\n webhook 127.0.0.1:0 {\n  endpoint http://e:2379\n  credentials u p\n }\n}":                     "server block a b: credentials",
		"a {\n etcd a {\n  endpoint http://e:2379\n }\n etcdzone {\n  credentials u p\n }\n}":                   "plugin/etcdzone: Corefile:6",
	} {
		err := CheckCorefile(caddy.CaddyfileInput{Contents: []byte(corefile), Filepath: "Corefile", ServerTypeName: "dns"})
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v, want none", corefile, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", corefile, err, want)
		}
	}
}
