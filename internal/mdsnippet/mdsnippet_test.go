package mdsnippet

import (
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
