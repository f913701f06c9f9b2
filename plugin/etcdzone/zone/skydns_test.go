package zone

import (
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin/etcd/msg"
	"github.com/globaladdr/globaladdr/plugin/pkg/horizon"

	"github.com/miekg/dns"
)

// mustRR parses s.
func mustRR(t *testing.T, s string) dns.RR {
	t.Helper()
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

// TestOwnerName checks the names of etcd keys, with their targetstrip.
func TestOwnerName(t *testing.T) {
	for _, tc := range []struct {
		key   string
		strip int
		want  string
		ok    bool
	}{
		{"/skydns/com/example/app/1a2b3c4d", 1, "app.example.com.", true},
		{"/skydns/com/example/App/x1", 0, "x1.app.example.com.", true},
		{"/skydns/com/example/1a2b3c4d", 1, "example.com.", true},
		{"/skydns/com/example/apps/*/1a2b3c4d", 1, "*.apps.example.com.", true},
		{"/skydns/com/example/a", 4, "", false},
	} {
		got, ok := ownerName(tc.key, tc.strip)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ownerName(%q, %d) = %q, %v; want %q, %v", tc.key, tc.strip, got, ok, tc.want, tc.ok)
		}
	}
}

// TestEncode checks the values that hold records as external-dns writes
// them, and the records no value holds.
func TestEncode(t *testing.T) {
	for rr, want := range map[string]string{
		`x.example.com. 60 IN TXT "token"`:             `{"text":"token","ttl":60,"targetstrip":1}`,
		`x.example.com. 0 IN A 192.168.0.51`:           `{"host":"192.168.0.51","targetstrip":1}`,
		`x.example.com. 60 IN AAAA fd00::51`:           `{"host":"fd00::51","ttl":60,"targetstrip":1}`,
		`x.example.com. 60 IN CNAME app.example.com.`:  `{"host":"app.example.com","ttl":60,"targetstrip":1}`,
		`x.example.com. 60 IN TXT "a" "b"`:             "",
		`x.example.com. 60 IN MX 10 mail.example.com.`: "",
	} {
		value, ok := Encode(mustRR(t, rr))
		if got := string(value); ok != (want != "") || got != want {
			t.Errorf("%s: %q, %v; want %q", rr, got, ok, want)
		}
	}
}

// TestDecodeMark checks that a value's mark field, horizon.MarkField, makes
// its source's mark, a value neither "true" nor "false" withholding it.
func TestDecodeMark(t *testing.T) {
	for mark, want := range map[string]horizon.Mark{
		``:              horizon.Unmarked,
		`,"%s":"true"`:  horizon.Exposed,
		`,"%s":"false"`: horizon.Withheld,
		`,"%s":"yes"`:   horizon.Withheld,
	} {
		value := `{"host":"192.0.2.1","targetstrip":1` + strings.ReplaceAll(mark, "%s", horizon.MarkField) + `}`
		src, err := Decode("/skydns/com/example/app/1a2b3c4d", []byte(value), func(*msg.Service) uint32 { return 300 })
		if err != nil || src.Mark != want || src.Owner != "app.example.com." {
			t.Errorf("%s: %+v %v, want mark %d", value, src, err, want)
		}
	}
}
