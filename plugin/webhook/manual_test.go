package webhook

import (
	"os"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
)

// TestManual holds README.md's account of the protocol to what the server
// answers: each claim is a phrase of the manual and the request it is about.
func TestManual(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	manual := strings.Join(strings.Fields(string(b)), " ")
	etcd := etcdtest.StartT(t)
	_, base, _ := start(t, "webhook 127.0.0.1:0 {\nendpoint "+etcd.Endpoint()+"\n}")
	outside := `{"create":[{"dnsName":"app.example.org","targets":["192.168.0.51"],"recordType":"A"}]}`
	inside := `{"create":[{"dnsName":"app.example.com","targets":["192.168.0.51"],"recordType":"A"}]}`
	for _, claim := range []struct {
		phrase                                  string
		method, path, contentType, accept, body string
		code                                    int
	}{
		{"a request whose `Accept` allows neither the media type nor `application/json` (the same JSON) gets 406",
			"GET", "/records", "", "text/plain", "", 406},
		{"a request whose `Accept` allows neither the media type nor `application/json`",
			"GET", "/records", "", "application/json", "", 200},
		{"a body of another media type than those two 415", "POST", "/records", "text/plain", "", inside, 415},
		{"a body of another media type than those two", "POST", "/records", "application/json", "", inside, 204},
		{"malformed JSON 400", "POST", "/records", media, "", `{"create":`, 400},
		{"`POST /records` writes a change set, and answers 204", "POST", "/records", media, "", inside, 204},
		{"a record outside them is not written (`POST /records` leaves it out and answers 204",
			"POST", "/records", media, "", outside, 204},
		{"`GET /` answers the media type", "GET", "/", "", media, "", 200},
	} {
		if !strings.Contains(manual, claim.phrase) {
			t.Errorf("README.md no longer says %q", claim.phrase)
		}
		if code, _, body := call(t, claim.method, base+claim.path, claim.contentType, claim.accept, claim.body); code != claim.code {
			t.Errorf("%s %s (Content-Type %q, Accept %q): %d %s; README.md says %q: want %d", claim.method, claim.path, claim.contentType, claim.accept, code, body, claim.phrase, claim.code)
		}
	}
	if code, _, body := call(t, "GET", base+"/records", "", media, ""); code != 200 || strings.Contains(body, "example.org") {
		t.Errorf("GET /records after a record outside the zones: %d %s, want none of it", code, body)
	}
}
