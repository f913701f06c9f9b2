package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/mdsnippet"
	"github.com/globaladdr/globaladdr/internal/prereq"
)

// snippetFiles are the Markdown files whose shell and Corefile snippets run
// as tests: README.md, the how-tos of docs/ and the plugins' manuals.
func snippetFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md"}
	for _, pattern := range []string{"../docs/*.md", "../plugin/*/README.md"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	return files
}

// snippetTests are the tests of their own that a fence may be handed to
// (`<!-- tested by TestNAME -->`).
var snippetTests = []string{etcdOperatorsTest, externalDNSWebhookTest, ownBuildTest}

// readSnippets returns file's snippets, and fails t on a fence without a
// language (which would escape the rule that shell and Corefile snippets
// run) or handed to a test that does not exist.
func readSnippets(t *testing.T, file string) []mdsnippet.Snippet {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := mdsnippet.Parse(string(b))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, s := range snippets {
		switch s.Lang {
		case "":
			t.Errorf("%s:%d: a fence without a language: say sh, corefile, txt, yaml, ...", file, s.Line)
		case "bash", "shell", "console", "Corefile":
			t.Errorf("%s:%d: fence %q: shell snippets are sh, Corefile snippets corefile (which the tests run)", file, s.Line, s.Lang)
		}
		if s.TestedBy != "" && !slices.Contains(snippetTests, s.TestedBy) {
			t.Errorf("%s:%d: tested by %s, which is none of the snippet tests %v", file, s.Line, s.TestedBy, snippetTests)
		}
	}
	return snippets
}

// snippetPrereqs ends t unless what the snippets run is at hand: root (for
// the lab's namespaces), the ./coredns make built, and Debian's programs
// (those of the snippets and of their givens).
func snippetPrereqs(t *testing.T) string {
	t.Helper()
	prereq.Root(t, "the README snippets run in network namespaces of their own")
	coredns, err := filepath.Abs("../coredns")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(coredns); err != nil {
		prereq.Missing(t, "the README snippets run ../coredns: run make (or make test) first")
	}
	for prog, pkg := range map[string]string{
		"unshare": "util-linux", "ip": "iproute2", "etcd": "etcd-server", "etcdctl": "etcd-client",
		"dig": "bind9-dnsutils", "nsupdate": "bind9-dnsutils", "curl": "curl",
		"dnssec-keygen": "bind9-utils", "openssl": "openssl",
	} {
		prereq.Program(t, prog, pkg)
	}
	return coredns
}

// generic reports whether the generic snippet tests run s: those not marked
// `<!-- not tested: REASON -->` nor `<!-- tested by TestNAME -->`.
func generic(s mdsnippet.Snippet) bool { return s.NotTested == "" && s.TestedBy == "" }

// TestREADMECorefiles starts CoreDNS from every Corefile snippet of the
// READMEs and how-tos (snippetFiles) that the generic tests run, as shown,
// in a lab of its own (see snippetLab) with Debian's etcd, after what its
// `<!-- given: COMMAND -->` markers make, and asks each of its listeners for its zone: each must
// answer. Then each of its `<!-- claim: CLAIM -->` markers must hold, asked
// from the client's address (see mdsnippet.Claim): a snippet that says
// which view a client gets is tested for it.
func TestREADMECorefiles(t *testing.T) {
	t.Parallel()
	coredns := snippetPrereqs(t)
	for _, file := range snippetFiles(t) {
		for _, s := range readSnippets(t, file) {
			if s.Lang != "corefile" || !generic(s) {
				continue
			}
			t.Run(fmt.Sprintf("%s:%d", strings.TrimPrefix(file, "../"), s.Line), func(t *testing.T) {
				t.Parallel()
				lab := newSnippetLab(t, coredns, s.Text)
				lab.given(t, s)
				lab.startCoreDNS()
				if err := lab.claims(s); err != nil {
					t.Fatalf("%s:%d: %v", file, s.Line, err)
				}
				lab.exec(t, "")
			})
		}
	}
}

// TestREADMEShellSnippets runs the shell snippets of the READMEs and
// how-tos (snippetFiles) that the generic tests run, as shown, with `set
// -e`: those of one section in one lab, in order, in a directory holding
// the section's last tested Corefile snippet before them as ./Corefile,
// after what its givens make. CoreDNS
// runs from that Corefile (started by the harness unless a snippet starts
// it). A line `dig +short ... # VALUE` must print VALUE.
func TestREADMEShellSnippets(t *testing.T) {
	t.Parallel()
	coredns := snippetPrereqs(t)
	ran := map[string]bool{}
	for _, file := range snippetFiles(t) {
		for _, sc := range shellScenes(readSnippets(t, file)) {
			t.Run(fmt.Sprintf("%s:%d", strings.TrimPrefix(file, "../"), sc.snippets[0].Line), func(t *testing.T) {
				lab := newSnippetLab(t, coredns, sc.corefile.Text)
				lab.given(t, sc.corefile)
				startsCoreDNS := false
				for _, s := range sc.snippets {
					startsCoreDNS = startsCoreDNS || strings.Contains(s.Text, "coredns -conf")
				}
				if sc.corefile.Text != "" && !startsCoreDNS {
					lab.startCoreDNS()
				}
				for _, s := range sc.snippets {
					lab.run(fmt.Sprintf("%s:%d", file, s.Line), s.Text)
					ran[s.Text] = true
				}
				lab.exec(t, "")
			})
		}
	}
	// What issue 30 wants shown and tested.
	for _, want := range []string{"etcdctl put /skydns/", "nsupdate -y", "del --prefix /external/", "dig +short @127.0.0.1 -p 1054"} {
		found := false
		for text := range ran {
			found = found || strings.Contains(text, want)
		}
		if !found {
			t.Errorf("no tested shell snippet holds %q", want)
		}
	}
}

// shellScene is a README's shell snippets that run in one lab, and the
// Corefile snippet before them (empty if none).
type shellScene struct {
	corefile mdsnippet.Snippet
	snippets []mdsnippet.Snippet
}

// shellScenes groups the tested shell snippets: by section, and within a
// section by the tested Corefile snippet before them.
func shellScenes(snippets []mdsnippet.Snippet) []shellScene {
	var (
		out      []shellScene
		section  string
		corefile mdsnippet.Snippet
		cur      = -1 // the index in out of the scene being filled
	)
	for _, s := range snippets {
		if s.Section != section {
			section, corefile, cur = s.Section, mdsnippet.Snippet{}, -1
		}
		if !generic(s) {
			continue
		}
		switch s.Lang {
		case "corefile":
			corefile, cur = s, -1
		case "sh":
			if cur < 0 {
				out = append(out, shellScene{corefile: corefile})
				cur = len(out) - 1
			}
			out[cur].snippets = append(out[cur].snippets, s)
		}
	}
	return out
}
