// Package stamp keeps, in etcd, what makes each transferred zone besides
// etcd's records: its stamp, a text of the Corefile's part in the zone (the
// apex, the delegations, the view's rules and global addresses, the
// signing) and of the program that builds it. The etcd revision at which a
// zone's stamp took its value counts in the zone's serial as the revision
// of a change of its records does: a process that starts, or reloads its
// Corefile, with a zone made otherwise than the last stamp says writes its
// own, and its serial passes every serial published before; one that finds
// its own stamp there keeps the serial. Replicas with the same Corefile find
// the stamp the first of them wrote, and agree.
package stamp

import (
	"context"
	"errors"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// tries bounds the writes of a stamp that other replicas change meanwhile.
const tries = 3

// errRace says that other writers changed the key under every try.
var errRace = errors.New("the key changed under each of the writes tried")

// keep makes text the stamp at key, and returns the revision at which the
// key took that value: the revision it was written at, or the one it was
// last written at when it holds text already (then nothing is written).
// It also returns the text the key held before, "" when it held none. A
// write succeeds only if no one else wrote the key since it was read: a
// replica that wrote the same text meanwhile is taken at its word.
func keep(ctx context.Context, kv clientv3.KV, key, text string) (rev int64, before string, err error) {
	for range tries {
		resp, err := kv.Get(ctx, key)
		if err != nil {
			return 0, "", err
		}
		unchanged := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		before = ""
		if len(resp.Kvs) > 0 {
			held := resp.Kvs[0]
			if string(held.Value) == text {
				return held.ModRevision, text, nil
			}
			before = string(held.Value)
			unchanged = clientv3.Compare(clientv3.ModRevision(key), "=", held.ModRevision)
		}
		put, err := kv.Txn(ctx).If(unchanged).Then(clientv3.OpPut(key, text)).Commit()
		if err != nil {
			return 0, "", err
		}
		if put.Succeeded {
			return put.Header.Revision, before, nil
		}
	}
	return 0, "", errRace
}

// Diff returns the lines of before that after lacks, each marked "-", and
// those of after that before lacks, marked "+": what a log line says
// changed.
func Diff(before, after string) []string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for _, l := range b {
		if l != "" && !slices.Contains(a, l) {
			out = append(out, "-"+l)
		}
	}
	for _, l := range a {
		if l != "" && !slices.Contains(b, l) {
			out = append(out, "+"+l)
		}
	}
	return out
}
