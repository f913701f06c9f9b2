package etcdtree

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// progressWait bounds how long the watch waits for etcd to take a request
// of a progress report.
const progressWait = time.Second

// requestProgress asks etcd for a progress report of the watches of ctx's
// stream, waiting progressWait at most: while etcd is unreachable the
// request would block, and with it the watch's loop, which also serves
// Rejudge (a view's change, a signed zone's refresh). An error is as good
// as no report: it is asked again next time.
func requestProgress(ctx context.Context, c *clientv3.Client) {
	ctx, cancel := context.WithTimeout(ctx, progressWait)
	defer cancel()
	_ = c.RequestProgress(ctx)
}
