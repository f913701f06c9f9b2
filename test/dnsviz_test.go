package test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/prereq"

	"github.com/miekg/dns"
)

// pygraphvizShim lets Debian 12's dnsviz grok run: it imports
// pygraphviz.release, which Debian's pygraphviz 1.7 lacks. Python runs a
// sitecustomize module found on PYTHONPATH at start-up.
const pygraphvizShim = `import sys, types
import pygraphviz
release = types.ModuleType("pygraphviz.release")
release.version = pygraphviz.__version__
sys.modules["pygraphviz.release"] = release
pygraphviz.release = release
`

// TestDNSViz probes dnssec.Corefile's external view with DNSViz, as the
// authoritative server of example.com whose DS is the key's, about names
// of every kind (an address, a CNAME, a wildcard, an empty non-terminal, a
// missing name), and has dnsviz grok, with the key as trust anchor, find no
// error in what it answered.
func TestDNSViz(t *testing.T) {
	dnsviz := prereq.Program(t, "dnsviz", "dnsviz")
	etcd := startEtcd(t)
	putRecords(t, etcd,
		a("app.example.com", exampleInternal),
		cname("www.example.com", "app.example.com"),
		a("*.apps.example.com", "192.168.0.80"),
		a("a.b.deep.example.com", "192.168.0.90"),
	)
	key, keyFile := writeKey(t, "example.com.")
	env := map[string]string{
		"DOMAIN":        exampleDomain,
		"GLOBAL_ADDR":   exampleGlobal,
		"ETCD_ENDPOINT": etcd.Endpoint(),
		"NS":            exampleNS,
		"DNSSEC_KEY":    keyFile,
	}
	setEnv(t, env)
	corefile := insertAfter(t, examplePorts.Replace(readExample(t, "dnssec.Corefile")), "responses-per-second 10", "        exempt-clients 127.0.0.0/8", 1)
	view := startExample(t, corefile, env)
	waitServing(t, view.Addr("dns"))
	checkDNSViz(t, dnsviz, view.Addr("dns"), key, nil, "example.com", "app.example.com", "www.example.com", "x.apps.example.com", "deep.example.com", "nothing.example.com")
}

// checkDNSViz has dnsviz probe the authoritative server of example.com at
// addr (as ns1.example.net, whose DS is key's) about names, and fails t
// unless dnsviz grok, with key as trust anchor, finds no error and
// something secure. others are the other zones the answers lead to (a
// CNAME's target): DNSViz asks their servers, as their zone's ns1, with
// their keys' DS, rather than the root servers.
func checkDNSViz(t *testing.T, dnsviz, addr string, key *dns.DNSKEY, others []signedZone, names ...string) {
	t.Helper()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "sitecustomize.py"), pygraphvizShim)
	probe := filepath.Join(dir, "probe.json")
	host, port, _ := net.SplitHostPort(addr)
	server := fmt.Sprintf("ns1.example.net=%s:%s", host, port)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(dnsviz, args...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if e, ok := err.(*exec.ExitError); ok {
				stderr = string(e.Stderr)
			}
			t.Fatalf("dnsviz %s: %v\n%s%s", args[0], err, out, stderr)
		}
		return out
	}
	args := []string{"probe", "-A", "-4", "-a", "example.com",
		"-x", "example.com+:" + server,
		"-N", "example.com:" + server,
		"-D", "example.com:" + dsText(key),
		"-R", "A,AAAA,CNAME,TXT,MX,SOA,NS",
		"-o", probe}
	for _, z := range others {
		host, port, _ := net.SplitHostPort(z.addr)
		server := fmt.Sprintf("ns1.%s=%s:%s", z.name, host, port)
		args = append(args, "-x", z.name+"+:"+server, "-N", z.name+":"+server, "-D", z.name+":"+dsText(z.key))
	}
	run(append(args, names...)...)
	anchor := filepath.Join(dir, "anchor")
	writeTestFile(t, anchor, key.String()+"\n")
	out := run("grok", "-r", probe, "-t", anchor)
	var results map[string]any
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("dnsviz grok: %v\n%s", err, out)
	}
	warnings := 0
	for _, name := range names {
		result, ok := results[name+"."]
		if !ok {
			t.Errorf("DNSViz did not analyze %s", name)
			continue
		}
		if found := collect(result, "errors"); len(found) > 0 {
			t.Errorf("DNSViz: %s: %v", name, found)
		}
		warnings += len(collect(result, "warnings"))
	}
	if !strings.Contains(string(out), `"status": "SECURE"`) {
		t.Errorf("DNSViz found nothing secure: the answers do not validate from the key")
	}
	t.Logf("DNSViz: %d names analyzed, no error, %d warnings", len(results), warnings)
}

// signedZone is a zone DNSViz is told of: its name (no final dot), the
// address of its server and its key.
type signedZone struct {
	name, addr string
	key        *dns.DNSKEY
}

// dsText is the DS of key as dnsviz probe -D takes it: its rdata.
func dsText(key *dns.DNSKEY) string {
	ds := key.ToDS(dns.SHA256)
	return strings.TrimPrefix(ds.String(), ds.Hdr.String())
}

// collect returns every value under key in the JSON value v, at any depth,
// with the path that leads to it.
func collect(v any, key string) []string {
	var found []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == key {
					found = append(found, fmt.Sprintf("%s: %v", path, child))
					continue
				}
				walk(child, path+"/"+k)
			}
		case []any:
			for i, child := range v {
				walk(child, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(v, "")
	return found
}

// writeTestFile writes content into the file name.
func writeTestFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
