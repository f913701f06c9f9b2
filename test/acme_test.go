package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/nameserver"

	"github.com/miekg/dns"
)

// acmeNames are the names of the certificate the ACME tests obtain: the
// apex and the wildcard, whose challenges share one name, and a hidden
// name.
var acmeNames = []string{"example.com", "*.example.com", "app.lan.example.com"}

// acmeTSIG and acmeTransfer make acme.Corefile's external view the hidden
// primary of the secondary SECONDARY, transferring with the TSIG key: the
// key replaces the view's tsig without one.
const (
	acmeTSIG = `    tsig {
        secret {$TSIG_KEY} {$TSIG_SECRET}
        require AXFR IXFR
    }`
	acmeTransfer = `    transfer {
        to {$SECONDARY}
    }`
)

// acmeLab is acme.Corefile's CoreDNS, with lan.example.com hidden in the
// external view (its HIDE), on an etcd holding a public host and a hidden
// one.
type acmeLab struct {
	etcd     *etcdtest.Server
	lan      string // the LAN view, where the UPDATEs go
	external string // the external view
	// secondary is a BIND secondary of the external view, if asked for.
	secondary string
}

// startACMELab starts an acmeLab, with a BIND secondary that has
// transferred the zone if secondary is set. It sets no environment
// variable, so that labs can run in parallel.
func startACMELab(t *testing.T, secondary bool) acmeLab {
	t.Helper()
	etcd := startEtcd(t)
	putRecords(t, etcd, a("app."+exampleDomain, exampleInternal), a("app.lan."+exampleDomain, "192.168.0.70"))
	env, _ := exampleEnv(t, etcd)
	corefile := examplePorts.Replace(readExample(t, "acme.Corefile"))
	if secondary {
		if strings.Count(corefile, "\n    tsig\n") != 1 {
			t.Fatal("acme.Corefile's external view has no tsig without a key")
		}
		corefile = strings.Replace(corefile, "\n    tsig\n", "\n"+acmeTSIG+"\n", 1)
		corefile = insertAfter(t, corefile, "bufsize 1232", acmeTransfer, 1)
	}
	c := startCoreDNS(t, expandExample(t, corefile, env))
	lab := acmeLab{etcd: etcd, lan: c.Addr("internal"), external: c.Addr("external")}
	waitServing(t, lab.lan)
	waitServing(t, lab.external)
	if secondary {
		zone := dns.Fqdn(exampleDomain)
		bind := nameserver.StartBIND(t, env["SECONDARY"], nameserver.Primary{Zone: zone, Addr: lab.external, Key: nameserver.TestKey})
		eventually(t, 10*time.Second, "BIND's first transfer", func() error {
			return answers(bind.Addr, "app."+zone, dns.TypeA, []string{exampleGlobal})
		})
		lab.secondary = bind.Addr
	}
	return lab
}

// TestACMECertificate has Pebble, a real ACME CA, issue a certificate for
// acmeNames through acme.Corefile: first asking the external view for the
// challenges, then a BIND secondary of it (a hidden primary's). Each time
// lego and cert-manager's rfc2136 solver write the challenges by signed
// UPDATEs to the LAN view (acmeclient), and each certificate has the three
// names, its key, and a chain to Pebble's root. Meanwhile the hidden
// subtree shows nothing but its challenge where Pebble asks; afterwards
// etcd holds no challenge.
func TestACMECertificate(t *testing.T) {
	t.Parallel()
	acmeDir(t) // before any lab starts: make acme-bins built the programs
	for _, run := range []struct {
		name      string
		secondary bool
	}{{"external view", false}, {"BIND secondary", true}} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			lab := startACMELab(t, run.secondary)
			resolver := lab.external
			if run.secondary {
				resolver = lab.secondary
			}
			ca := startPebble(t, resolver)
			for _, solver := range []string{"lego", "cert-manager"} {
				t.Run(solver, func(t *testing.T) {
					watch := watchHidden(resolver)
					cert, key := obtainCertificate(t, ca, lab.lan, resolver, solver)
					leaks, answered := watch.Stop()
					for _, leak := range leaks {
						t.Errorf("the hidden subtree showed %s", leak)
					}
					t.Logf("%d replies of the watch held the hidden name's challenge", answered)
					checkCertificate(t, cert, key, ca.root(t), acmeNames)
					if keys := challengeKeys(t, lab.etcd); len(keys) > 0 {
						t.Errorf("challenge keys left in etcd: %v", keys)
					}
				})
			}
		})
	}
}

// expandExample returns corefile with its {$NAME} placeholders replaced by
// env's values, as CoreDNS replaces them from the environment, which
// parallel tests cannot set. t fails if env lacks one, but for etcd's
// credentials and client certificate, which unset give none (and which
// this leaves to CoreDNS, from the environment, where they are unset).
func expandExample(t *testing.T, corefile string, env map[string]string) string {
	t.Helper()
	return envPlaceholder.ReplaceAllStringFunc(corefile, func(placeholder string) string {
		name := envPlaceholder.FindStringSubmatch(placeholder)[1]
		value, ok := env[name]
		if value == "" && slices.Contains(etcdSecurityPlaceholders, name) {
			// Left to CoreDNS, which expands an unset variable to an
			// empty argument: a line of them gives no credentials.
			return placeholder
		}
		if !ok {
			t.Fatalf("the Corefile uses %s, which the test does not set", placeholder)
		}
		return value
	})
}

// obtainCertificate runs acmeclient with solver against ca, for acmeNames:
// its UPDATEs go to lan, signed with the examples' TSIG key, and it checks
// propagation at resolver. cert-manager's solver takes the rest of its
// settings from the example's ClusterIssuer, which acmeclient decodes
// strictly with cert-manager's API types. It returns the files of the certificate and its
// key; t fails if acmeclient does.
func obtainCertificate(t *testing.T, ca *pebble, lan, resolver, solver string) (cert, key string) {
	t.Helper()
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{
		"-directory", ca.directory, "-ca", ca.caFile,
		"-nameserver", lan, "-tsig-key", nameserver.TestKey.Name, "-tsig-secret", nameserver.TestKey.Secret,
		"-resolver", resolver, "-solver", solver, "-cert", cert, "-key", key,
		"-issuer", filepath.Join(examplesDir, "kubernetes", certManagerManifest),
	}
	out, err := exec.CommandContext(ctx, filepath.Join(acmeDir(t), "acmeclient"), append(args, acmeNames...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("acmeclient -solver %s: %v\n%s", solver, err, out)
	}
	return cert, key
}

// TestACMEIssuerInREADME checks that docs/acme.md shows the objects of
// certManagerManifest as they are, the certificate test's settings.
func TestACMEIssuerInREADME(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(examplesDir, "kubernetes", certManagerManifest))
	if err != nil {
		t.Fatal(err)
	}
	objects := string(b[strings.Index(string(b), "apiVersion:"):])
	doc, err := os.ReadFile("../docs/acme.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+objects+"```\n") {
		t.Errorf("docs/acme.md does not show %s's objects as they are:\n%s", certManagerManifest, objects)
	}
}
