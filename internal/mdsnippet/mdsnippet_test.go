package mdsnippet

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	md := "# T\n\n## Run\n\n```sh\necho a\n```\n\n<!-- not tested: needs a cluster -->\n\n```sh\nkubectl get pods\n```\n" +
		"\n## Steps\n\n1. Do:\n\n   ```corefile\n   . {\n       whoami\n   }\n   ```\n\n~~~ txt\nx\n~~~\n"
	got, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Snippet{
		{Line: 5, Lang: "sh", Section: "Run", Text: "echo a\n"},
		{Line: 11, Lang: "sh", Section: "Run", NotTested: "needs a cluster", Text: "kubectl get pods\n"},
		{Line: 19, Lang: "corefile", Section: "Steps", Text: ". {\n    whoami\n}\n"},
		{Line: 25, Lang: "txt", Section: "Steps", Text: "x\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseMarkerOnlyBeforeItsFence(t *testing.T) {
	got, err := Parse("<!-- not tested: x -->\n\ntext\n\n```sh\ntrue\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].NotTested != "" {
		t.Errorf("a marker with text between it and the fence counted: %+v", got[0])
	}
}

func TestParseUnclosed(t *testing.T) {
	if _, err := Parse("```sh\ntrue\n"); err == nil {
		t.Error("an unclosed fence was accepted")
	}
}

func TestParseMarkers(t *testing.T) {
	md := "## Views\n\n<!-- given: etcdctl put /k v -->\n<!-- claim: from 192.168.0.5: app.example.com is 192.168.0.51 -->\n\n" +
		"<!-- claim: from fd12::5 to [2001:2::1]:1053: www.example.org AAAA is REFUSED -->\n```corefile\n. {\n}\n```\n\n" +
		"<!-- tested by TestEtcd -->\n```sh\ntrue\n```\n"
	got, err := Parse(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []Snippet{
		{Line: 7, Lang: "corefile", Section: "Views", Given: []string{"etcdctl put /k v"}, Claims: []Claim{
			{From: netip.MustParseAddr("192.168.0.5"), Name: "app.example.com", Type: "A", Want: "192.168.0.51"},
			{From: netip.MustParseAddr("fd12::5"), Server: netip.MustParseAddr("2001:2::1"), Port: 1053, Name: "www.example.org", Type: "AAAA", Want: "REFUSED"},
		}, Text: ". {\n}\n"},
		{Line: 13, Lang: "sh", Section: "Views", TestedBy: "TestEtcd", Text: "true\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseBadMarkers(t *testing.T) {
	for _, md := range []string{
		"<!-- claims: from 192.168.0.5: a is b -->\n```sh\ntrue\n```\n",
		"<!-- claim: from somewhere: a is b -->\n```sh\ntrue\n```\n",
		"<!-- claim: from 192.168.0.5: a BOGUS is b -->\n```sh\ntrue\n```\n",
		"<!-- claim: from 192.168.0.5 app.example.com is b -->\n```sh\ntrue\n```\n",
		"<!-- not tested: x -->\n<!-- given: true -->\n```sh\ntrue\n```\n",
		"<!-- not tested: -->\n```sh\ntrue\n```\n",
	} {
		if _, err := Parse(md); err == nil {
			t.Errorf("accepted: %q", md)
		}
	}
}
