package test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/globaladdr/globaladdr/internal/etcdtest"
	"github.com/globaladdr/globaladdr/internal/externaldns"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// This file reads SkyDNS trees as external-dns's providers write them, for
// comparing one with another.

// randomLabel is a random label of a record's key, as the coredns provider
// draws it.
var randomLabel = regexp.MustCompile(`^[0-9a-f]{8}$`)

// skydnsTree returns what etcd holds under prefix as lines "NAME VALUE",
// sorted: each key's owner name (see ownerName) and its value as stored.
// labels are the random labels of the keys.
func skydnsTree(t *testing.T, etcd *etcdtest.Server, prefix string) (lines, labels []string) {
	t.Helper()
	resp, err := etcd.Client().Get(context.Background(), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		name := ownerName(t, prefix, kv)
		if label := strings.TrimPrefix(string(kv.Key), externaldns.Key(prefix, name)+"/"); label != string(kv.Key) {
			labels = append(labels, label)
		}
		lines = append(lines, name+" "+string(kv.Value))
	}
	slices.Sort(lines)
	return lines, labels
}

// ownerName returns the owner name of the records of kv, a SkyDNS key below
// prefix: the key's labels, reversed, without those its targetstrip strips.
func ownerName(t *testing.T, prefix string, kv *mvccpb.KeyValue) string {
	t.Helper()
	var v struct {
		TargetStrip int `json:"targetstrip"`
	}
	if err := json.Unmarshal(kv.Value, &v); err != nil {
		t.Fatalf("%s: %v", kv.Key, err)
	}
	labels := strings.Split(strings.TrimPrefix(string(kv.Key), prefix), "/")
	slices.Reverse(labels)
	if v.TargetStrip < 0 || v.TargetStrip >= len(labels) {
		t.Fatalf("%s: targetstrip %d", kv.Key, v.TargetStrip)
	}
	return strings.Join(labels[v.TargetStrip:], ".")
}

// skydnsValue is a SkyDNS value as external-dns's coredns provider writes
// it, its fields in its order.
type skydnsValue struct {
	Host        string `json:"host,omitempty"`
	Text        string `json:"text,omitempty"`
	TTL         uint32 `json:"ttl,omitempty"`
	TargetStrip int    `json:"targetstrip,omitempty"`
}

// unfoldTexts returns lines (of skydnsTree) with each value that holds a
// host and a text split into two, the host's and the text's, each with the
// TTL and targetstrip: as the webhook writes them. folded are the names
// of the values split.
func unfoldTexts(t *testing.T, lines []string) (unfolded, folded []string) {
	t.Helper()
	for _, l := range lines {
		name, value, _ := strings.Cut(l, " ")
		var v skydnsValue
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatal(err)
		}
		if v.Host == "" || v.Text == "" {
			unfolded = append(unfolded, l)
			continue
		}
		folded = append(folded, name)
		host, text := v, v
		host.Text, text.Host = "", ""
		for _, part := range []skydnsValue{host, text} {
			b, err := json.Marshal(part)
			if err != nil {
				t.Fatal(err)
			}
			unfolded = append(unfolded, name+" "+string(b))
		}
	}
	slices.Sort(unfolded)
	return unfolded, folded
}

// diffText shows how got differs from want, sorted lines both: a line of
// want that got lacks with "- " before it, one that got adds with "+ ".
func diffText(want, got []string) string {
	added, removed := lineDiff(want, got)
	var b strings.Builder
	for _, l := range removed {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	for _, l := range added {
		fmt.Fprintf(&b, "+ %s\n", l)
	}
	return b.String()
}
