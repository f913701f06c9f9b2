package test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestDemo runs the demo as `make demo` does, in a lab of its own (its
// listeners are fixed ports), and follows what it prints: its Corefile, and
// a record to write with etcdctl with the dig commands that show it. Before
// the write neither view answers the name; after it, each view answers what
// the demo said it would.
func TestDemo(t *testing.T) {
	coredns := snippetPrereqs(t)
	demo := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", demo, "../demo").CombinedOutput(); err != nil {
		t.Fatalf("go build ../demo: %v\n%s", err, out)
	}
	lab := newSnippetLab(t, coredns, "")
	fmt.Fprintf(&lab.script, "%q -coredns ./coredns >\"$LAB/demo.log\" 2>&1 &\n", demo)
	lab.script.WriteString(demoChecks)
	lab.exec(t, "")
}

// demoChecks waits for the demo to say it runs, checks that it printed its
// Corefile, then runs the dig commands it prints for the record to write
// (nothing yet), the etcdctl put it prints, and the dig commands again: each
// must print the value its comment shows.
const demoChecks = `out="$LAB/demo.log"
__wait demo grep -q 'Press Ctrl-C' "$out"
grep -q '^Its Corefile:' "$out" && grep -q 'globaladdr 203.0.113.10' "$out" || { echo "lab: the demo printed no Corefile" >&2; exit 1; }
mapfile -t digs < <(grep '^  dig +short ' "$out")
put=$(grep '^  etcdctl .* put ' "$out")
[ "${#digs[@]}" = 2 ] && [ -n "$put" ] || { echo "lab: the demo printed no put and two digs to try" >&2; exit 1; }
for d in "${digs[@]}"; do __expect "" ${d%%#*}; done
echo "lab: running $put"
eval "$put"
for d in "${digs[@]}"; do
	want=$(sed 's/.*# *\([^ ]*\).*/\1/' <<<"$d")
	__expect "$want" ${d%%#*}
done
`
