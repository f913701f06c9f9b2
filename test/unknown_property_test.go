package test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// syntaxProperties returns the properties that the Syntax section of the
// manual at path lists: the first word of each line inside its block.
func syntaxProperties(t *testing.T, path string) []string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)\n## Syntax\n\n(?:```|~~~) ?txt\n[^\n]*\\{\n(.*?)\n\\}\n").FindSubmatch(text)
	if section == nil {
		t.Fatalf("%s: no Syntax block", path)
	}
	var props []string
	for line := range strings.Lines(string(section[1])) {
		if p := strings.Fields(line); len(p) > 0 && !slices.Contains(props, p[0]) {
			props = append(props, p[0])
		}
	}
	return props
}

// TestUnknownPropertySuggests starts each of the project's plugins with
// each property its manual's Syntax lists, mistyped (its last letter
// doubled): start-up stops naming the property meant. So every property
// of a manual is one its plugin reads, and one its "did you mean" knows.
func TestUnknownPropertySuggests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ plugin, corefile string }{
		{"globaladdr", "example.com:{port:dns} {\n\tglobaladdr {\n\t\tTYPO\n\t}\n\tetcdzone\n\tetcd example.com\n}\n"},
		{"etcdzone", "example.com:{port:dns} {\n\tetcdzone {\n\t\tTYPO\n\t}\n\tetcd example.com\n}\n"},
		{"publish", "example.com:{port:dns} {\n\tpublish {\n\t\tTYPO\n\t}\n\tglobaladdr 203.0.113.10\n\tetcdzone\n\tetcd example.com\n}\n"},
		{"webhook", "example.com:{port:dns} {\n\twebhook 127.0.0.1:{port:api} {\n\t\tTYPO\n\t}\n}\n"},
	} {
		t.Run(tc.plugin, func(t *testing.T) {
			props := syntaxProperties(t, "../plugin/"+tc.plugin+"/README.md")
			if len(props) < 4 {
				t.Fatalf("the Syntax lists %v", props)
			}
			for _, p := range props {
				typo := p + p[len(p)-1:]
				_, err := tryStartCoreDNS(t, strings.Replace(tc.corefile, "TYPO", typo, 1))
				want := `plugin/` + tc.plugin + `: Corefile:3 - Error during parsing: unknown property "` + typo + `": did you mean "` + p + `"?`
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: start-up: %v, want %s", typo, err, want)
				}
			}
		})
	}
}
