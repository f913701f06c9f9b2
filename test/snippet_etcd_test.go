package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/mdsnippet"
)

// etcdOperatorsTest is the test that runs the snippets of docs/etcd.md
// (and the plugins' Corefiles for the same cluster), marked
// `<!-- tested by TestREADMEEtcdOperators -->`.
const etcdOperatorsTest = "TestREADMEEtcdOperators"

// etcdOperatorsCluster starts three members of Debian's etcd at the
// addresses of docs/etcd.md's ETCD_ENDPOINT, as the page says to: each with
// the certificate its openssl recipe made for it, serving https to clients
// with a certificate of the CA; the peers talk plain HTTP on the lab's
// loopback. It waits until the cluster answers.
const etcdOperatorsCluster = `for i in 1 2 3; do
	etcd --name etcd$i --data-dir "$LAB/etcd$i" \
		--cert-file=etcd$i.crt --key-file=etcd$i.key --trusted-ca-file=ca.crt --client-cert-auth \
		--listen-client-urls=https://10.0.0.$i:2379 --advertise-client-urls=https://10.0.0.$i:2379 \
		--listen-peer-urls=http://10.0.0.$i:2380 --initial-advertise-peer-urls=http://10.0.0.$i:2380 \
		--initial-cluster=etcd1=http://10.0.0.1:2380,etcd2=http://10.0.0.2:2380,etcd3=http://10.0.0.3:2380 \
		>"$LAB/etcd$i.log" 2>&1 &
done
__wait 'the etcd cluster' etcdctl --endpoints=https://10.0.0.1:2379,https://10.0.0.2:2379,https://10.0.0.3:2379 \
	--cacert=ca.crt --cert=admin.crt --key=admin.key endpoint health
`

// etcdOperatorsChecks holds the script's users to what the README says:
// without a password nobody reads, dns-reader reads but cannot write but
// its stamps, dns-writer writes the tree but not the global address, root
// writes it.
const etcdOperatorsChecks = `__as() { local u=$1; shift; etcdctl --endpoints=${ETCD_ENDPOINT// /,} --cacert=ca.crt --cert=admin.crt --key=admin.key ${u:+--user=$u} "$@"; }
__denied() { if __as "$@" >/dev/null 2>&1; then echo "lab: etcd let $1 $2 $3" >&2; return 1; fi; }
__denied "" get /skydns/ --prefix
__as "dns-writer:$DNS_WRITER_PASSWORD" put /skydns/com/example/app/1a2b3c4d '{"host":"192.168.0.51","targetstrip":1}'
__denied "dns-writer:$DNS_WRITER_PASSWORD" put /globaladdr/example.com 198.51.100.1
__as "root:$ROOT_PASSWORD" put /globaladdr/example.com 203.0.113.10
__as "dns-reader:$DNS_READER_PASSWORD" get /skydns/com/example/app/1a2b3c4d
__denied "dns-reader:$DNS_READER_PASSWORD" put /skydns/com/example/evil/1 '{"host":"192.168.0.66"}'
__denied "dns-reader:$DNS_READER_PASSWORD" put /globaladdr/example.com 198.51.100.1
__as "dns-reader:$DNS_READER_PASSWORD" put /globaladdr/serial/skydns/external/example.com. test
`

// TestREADMEEtcdOperators runs docs/etcd.md's snippets for etcd as
// operators run it, as printed, on a Debian machine of its own (a lab): the openssl
// recipe; three members of Debian's etcd at 10.0.0.1-3 started with its
// certificates (etcdOperatorsCluster); the RBAC script, which makes root,
// enables auth and makes the views' users, with no prompt; then each Corefile
// marked for this test, started by the README's start snippet with the CA's
// files and the reader's password. The users must have the rights the
// page gives them, and CoreDNS must answer from the cluster as dns-reader.
func TestREADMEEtcdOperators(t *testing.T) {
	t.Parallel()
	coredns := snippetPrereqs(t)
	// placed is a snippet and the file it is in.
	type placed struct {
		file string
		mdsnippet.Snippet
	}
	var shell, corefiles []placed
	for _, file := range snippetFiles(t) {
		for _, s := range readSnippets(t, file) {
			if s.TestedBy != etcdOperatorsTest {
				continue
			}
			switch s.Lang {
			case "sh":
				shell = append(shell, placed{file, s})
			case "corefile":
				corefiles = append(corefiles, placed{file, s})
			default:
				t.Errorf("%s:%d: %s runs sh and corefile snippets, not %s", file, s.Line, etcdOperatorsTest, s.Lang)
			}
		}
	}
	if len(shell) != 3 || len(corefiles) == 0 {
		t.Fatalf("the etcd how-to has %d shell snippets for %s (want 3: certificates, users, start) and %d Corefiles", len(shell), etcdOperatorsTest, len(corefiles))
	}
	certs, users, start := shell[0], shell[1], shell[2]
	at := func(s placed) string { return fmt.Sprintf("%s:%d", strings.TrimPrefix(s.file, "../"), s.Line) }
	for _, cf := range corefiles {
		t.Run(at(cf), func(t *testing.T) {
			lab := newBareSnippetLab(t, coredns, cf.Text, "10.0.0.1", "10.0.0.2", "10.0.0.3")
			lab.run(at(certs), certs.Text)
			lab.script.WriteString(etcdOperatorsCluster)
			lab.run(at(users), users.Text)
			lab.script.WriteString(etcdOperatorsChecks)
			lab.run(at(start), start.Text)
			lab.exec(t, "__expect 203.0.113.10 dig +short +time=1 +tries=1 @127.0.0.1 app.example.com\n")
		})
	}
}
