package conformance

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// randomLabel matches the random label external-dns puts at the end of a
// record's key.
var randomLabel = regexp.MustCompile(`/[0-9a-f]{8}$`)

// besideHost matches the ownership text (Legacy) stored in the value of one
// of a name's addresses or canonical names.
var besideHost = regexp.MustCompile(`^(\{"host":"[^"]*"),("text":"(?:[^"\\]|\\.)*"),`)

// compareTrees fails t unless upstream and imitation hold the same keys below
// externaldns.DefaultPrefix and the same values under them, as tree sees
// them for r.
func compareTrees(t *testing.T, r Release, upstream, imitation *etcdtest.Server) {
	t.Helper()
	got, want := tree(t, imitation.Client(), r.TextsApart), tree(t, upstream.Client(), r.TextsApart)
	if !slices.Equal(got, want) {
		t.Errorf("package externaldns wrote\n\t%s\nexternal-dns wrote\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// tree returns every key below externaldns.DefaultPrefix with its value, as
// "key = value", sorted, with what external-dns leaves to chance made equal:
//
//   - a key's random label is "<label>";
//   - an ownership text stored beside a host (Legacy) is a line of its own,
//     "key beside a host: text", since the host that gets it depends on the
//     order of external-dns's changes; with apart (Release.TextsApart), the
//     line of a key of its own, "key = {"text":text,"targetstrip":1}";
//   - equal lines count once: on an update, external-dns may write an
//     ownership record again under a new label and keep the old one.
func tree(t *testing.T, cli *clientv3.Client, apart bool) []string {
	t.Helper()
	resp, err := cli.Get(context.Background(), externaldns.DefaultPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, kv := range resp.Kvs {
		key, value := randomLabel.ReplaceAllString(string(kv.Key), "/<label>"), string(kv.Value)
		if m := besideHost.FindStringSubmatch(value); m != nil {
			text := key + " beside a host: " + m[2]
			if apart {
				text = key + ` = {` + m[2] + `,"targetstrip":1}`
			}
			lines = append(lines, text)
			value = m[1] + "," + value[len(m[0]):]
		}
		lines = append(lines, key+" = "+value)
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}
