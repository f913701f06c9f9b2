package test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// snippetLab is a network of its own (a network and mount namespace made
// with unshare) in which README snippets run as a reader runs them on a
// Debian machine: Debian's etcd answers on localhost:2379 and, through the
// lab's /etc/hosts, as etcd:2379; the addresses the Corefile binds to are
// the lab's; ./coredns is the binary make built; the working directory holds
// the Corefile; /etc is the host's under an overlay of the lab's, so that
// what a snippet writes there (keys, certificates) stays in the lab. Nothing
// it sends leaves the namespace, and any port is free in it, so snippets run
// with the ports and addresses they show.
type snippetLab struct {
	dir      string
	corefile string   // the Corefile in the working directory, or ""
	addrs    []string // the addresses the lab's loopback carries beside 127.0.0.1
	script   strings.Builder
}

// newSnippetLab prepares a lab in a temporary directory, with corefile (if
// not "") as ./Corefile, the secondaries' addresses extra (from a snippet
// about secondaries) on its loopback too, and Debian's etcd on
// localhost:2379.
func newSnippetLab(t *testing.T, coredns, corefile string, extra ...string) *snippetLab {
	t.Helper()
	l := newBareSnippetLab(t, coredns, corefile, extra...)
	l.script.WriteString(labEtcd)
	return l
}

// newBareSnippetLab prepares a lab as newSnippetLab does, without etcd.
func newBareSnippetLab(t *testing.T, coredns, corefile string, extra ...string) *snippetLab {
	t.Helper()
	l := &snippetLab{dir: t.TempDir(), corefile: corefile}
	work := filepath.Join(l.dir, "work")
	for _, d := range []string{work, filepath.Join(l.dir, "etc", "upper"), filepath.Join(l.dir, "etc", "work")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.Symlink(coredns, filepath.Join(work, "coredns")))
	if corefile != "" {
		must(t, os.WriteFile(filepath.Join(work, "Corefile"), []byte(corefile), 0o644))
	}
	l.addrs = append(corefileBindAddrs(corefile), extra...)
	fmt.Fprintf(&l.script, labPrologue, l.dir)
	l.script.WriteString(labFixtures)
	for _, a := range l.addrs {
		bits := "/32"
		if netip.MustParseAddr(a).Is6() {
			bits = "/128 nodad"
		}
		fmt.Fprintf(&l.script, "ip addr add %s%s dev lo\n", a, bits)
	}
	return l
}

// labPrologue starts a lab's script: strict bash, the lab's loopback, /etc
// and /etc/hosts, a place for named network namespaces (ip netns), and the
// functions the script waits and checks with.
const labPrologue = `set -euo pipefail
LAB=%q
ip link set lo up
mount -t overlay lab -o lowerdir=/etc,upperdir="$LAB/etc/upper",workdir="$LAB/etc/work" /etc
echo '127.0.0.1 localhost etcd' >/etc/hosts
mkdir -p /run/netns && mount -t tmpfs lab /run/netns
cd "$LAB/work"
export PATH="$LAB/work:$PATH"
# __wait WHAT CMD...: run CMD until it succeeds, for at most 30 s.
__wait() {
	local what=$1; shift
	for _ in $(seq 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "lab: $what: not ready after 30 s" >&2; return 1
}
# __answers ADDR PORT ZONE: a DNS reply over TCP, whatever its rcode.
__answers() { dig +tcp +tries=1 +time=1 @"$1" -p "$2" "$3" SOA >/dev/null; }
# __expect WANT CMD...: run CMD until it prints WANT, for at most 10 s.
__expect() {
	local want=$1 got= end=$((SECONDS + 10)); shift
	while :; do
		got=$("$@" 2>&1) || true
		[ "$got" = "$want" ] && { echo "$got"; return 0; }
		[ "$SECONDS" -lt "$end" ] || break
		sleep 0.1
	done
	echo "lab: '$*' printed '$got'; the README shows '$want'" >&2; return 1
}
`

// labEtcd starts Debian's etcd in the lab and waits for it.
const labEtcd = `etcd --name lab --data-dir "$LAB/etcd" --listen-client-urls http://127.0.0.1:2379 \
	--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 >"$LAB/etcd.log" 2>&1 &
__wait etcd etcdctl endpoint health
`

// startCoreDNS has the script start ./coredns with the lab's Corefile, as
// the README says to.
func (l *snippetLab) startCoreDNS() {
	l.script.WriteString("./coredns -conf Corefile >\"$LAB/coredns.log\" 2>&1 &\n")
	l.waitListening()
}

// waitListening has the script wait until every listener of the lab's
// Corefile answers.
func (l *snippetLab) waitListening() {
	for _, ln := range corefileListeners(l.corefile) {
		fmt.Fprintf(&l.script, "__wait 'CoreDNS on %[1]s port %[2]s' __answers %[1]s %[2]s %[3]s\n", ln.addr, ln.port, ln.zone)
	}
}

// expectation is a shell line that shows what it prints in a trailing
// comment: `dig +short ... # 192.168.0.51` (after the value, a colon may
// start an explanation).
var expectation = regexp.MustCompile(`^(dig \+short .*?)\s+#\s*([^\s:]+)`)

// run has the script run a snippet's lines as they are, in the lab's shell;
// a line showing what it prints (expectation) must print it, within 10 s.
// When the snippet starts CoreDNS, the script waits for its listeners.
func (l *snippetLab) run(name, text string) {
	fmt.Fprintf(&l.script, "echo '### %s'\n", name)
	for _, line := range strings.SplitAfter(text, "\n") {
		if m := expectation.FindStringSubmatch(line); m != nil {
			fmt.Fprintf(&l.script, "__expect %q %s\n", m[2], m[1])
			continue
		}
		l.script.WriteString(line)
	}
	if strings.Contains(text, "coredns -conf") {
		l.waitListening()
	}
}

// exec runs the lab's script, with then appended, in new namespaces and
// fails t with its output and its servers' logs if it fails.
func (l *snippetLab) exec(t *testing.T, then string) {
	t.Helper()
	out, err := l.execOutput(t, then)
	if err != nil {
		var logs strings.Builder
		files, _ := filepath.Glob(filepath.Join(l.dir, "*.log"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				fmt.Fprintf(&logs, "--- %s (last lines):\n%s\n", filepath.Base(f), lastLines(string(b), 20))
			}
		}
		t.Errorf("%v\n--- output:\n%s\n%s--- script:\n%s", err, out, logs.String(), l.script.String())
	}
}

// execOutput runs the lab's script, with then appended, in new namespaces,
// and returns what it printed and how it ended.
func (l *snippetLab) execOutput(t *testing.T, then string) ([]byte, error) {
	t.Helper()
	l.script.WriteString(then)
	script := filepath.Join(l.dir, "lab.sh")
	must(t, os.WriteFile(script, []byte(l.script.String()), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// --pid --kill-child: every process the script started ends with it,
	// and the script with unshare when the time is up.
	cmd := exec.CommandContext(ctx, "unshare", "--net", "--mount", "--pid", "--kill-child", "--mount-proc", "bash", script)
	cmd.WaitDelay = 10 * time.Second
	return cmd.CombinedOutput()
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// listener is a DNS listener of a Corefile and a zone it serves.
type listener struct {
	addr, port, zone string
	bound            bool // addr is of a bind directive, not the lab's default
}

// corefileListeners returns the plain DNS listeners of corefile's server
// blocks: each block key's port (53 without one) on each of the block's bind
// addresses (127.0.0.1 without bind), asked for the key's zone (example.com
// for the root zone, which the snippets forward).
func corefileListeners(corefile string) []listener {
	var out []listener
	for _, b := range corefileBlocks(corefile) {
		addrs, bound := b.binds, len(b.binds) > 0
		if !bound {
			addrs = []string{"127.0.0.1"}
		}
		for _, key := range b.keys {
			zone, port, ok := keyZonePort(key)
			if !ok {
				continue
			}
			if zone == "." {
				zone = "example.com"
			}
			for _, a := range addrs {
				if ln := (listener{a, port, zone, bound}); !slices.Contains(out, ln) {
					out = append(out, ln)
				}
			}
		}
	}
	return out
}

// keyZonePort returns the zone and port of a server block's key, and false
// for a key of another protocol than plain DNS (tls://, https://, ...).
func keyZonePort(key string) (zone, port string, ok bool) {
	if scheme, _, found := strings.Cut(key, "://"); found && scheme != "dns" {
		return "", "", false
	}
	zone, port, found := strings.Cut(strings.TrimPrefix(key, "dns://"), ":")
	if !found {
		port = "53"
	}
	return zone, port, true
}

// corefileBindAddrs returns the addresses corefile's blocks bind to.
func corefileBindAddrs(corefile string) []string {
	var out []string
	for _, b := range corefileBlocks(corefile) {
		for _, a := range b.binds {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// serverBlock is what the lab needs of a Corefile's server block.
type serverBlock struct{ keys, binds []string }

// corefileBlocks reads corefile's server blocks: their keys and the
// addresses of their bind directives. It reads the snippets' plain layout
// (a key line ending in "{", directives one per line), not every Corefile.
func corefileBlocks(corefile string) []serverBlock {
	var (
		out   []serverBlock
		depth int
	)
	for _, line := range strings.Split(corefile, "\n") {
		if i := strings.Index(line, "#"); i >= 0 && !strings.Contains(line[:i], `"`) {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if depth == 0 && f[len(f)-1] == "{" {
			out = append(out, serverBlock{keys: f[:len(f)-1]})
		}
		if depth == 1 && f[0] == "bind" {
			out[len(out)-1].binds = append(out[len(out)-1].binds, f[1:]...)
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
	}
	return out
}

// must fails t at once on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
