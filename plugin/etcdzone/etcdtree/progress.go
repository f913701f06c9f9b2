package etcdtree

import (
	"context"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// progressWait bounds how long a watch waits for etcd to take a request of
// a progress report.
const progressWait = time.Second

// requestProgress asks etcd for a progress report of the watches of ctx's
// stream, waiting progressWait at most: while etcd is unreachable the
// request would block, and with it the watch's loop, which also serves the
// zones that join, leave or wait to be judged again. An error is as good
// as no report: it is asked again next time.
func requestProgress(ctx context.Context, c *clientv3.Client) {
	ctx, cancel := context.WithTimeout(ctx, progressWait)
	defer cancel()
	_ = c.RequestProgress(ctx)
}

// checkProgress sets whether the tree may take etcd's progress reports for
// what a watch has delivered: etcd before 3.4.24 and 3.5.8 reports the
// current revision at once, also to a watch that has not caught up yet
// (etcd-io/etcd#15220). An endpoint whose release can't be told counts as
// one with the fix.
func (t *Tree) checkProgress(ctx context.Context) {
	t.noProgress = false
	for _, ep := range t.c.Client.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, progressWait)
		st, err := t.c.Client.Status(sctx, ep)
		cancel()
		if err == nil && !reportsProgress(st.Version) {
			if !t.toldNoProgress {
				log.Debugf("%s: etcd %s at %s reports a watch's progress before it has caught up (etcd-io/etcd#15220): not relying on it", t.c.Path, st.Version, ep)
				t.toldNoProgress = true
			}
			t.noProgress = true
			return
		}
	}
}

// reportsProgress reports whether etcd of the release version reports a
// watch's progress only once it has caught up.
func reportsProgress(version string) bool {
	var n [3]int
	for i, part := range strings.SplitN(version, ".", 3) {
		n[i], _ = strconv.Atoi(strings.TrimRightFunc(part, func(r rune) bool { return r < '0' || r > '9' }))
	}
	switch {
	case n[0] != 3:
		return n[0] > 3
	case n[1] == 4:
		return n[2] >= 24
	case n[1] == 5:
		return n[2] >= 8
	}
	return n[1] > 5
}
