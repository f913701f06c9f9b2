package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/globaladdr/globaladdr/internal/wait"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdRetry is how long an etcd source waits before it reads its key again
// after a failure.
const etcdRetry = time.Second

var (
	errKeyMissing = errors.New("the key does not exist")
	errKeyDeleted = errors.New("the key was deleted")
	errCompacted  = errors.New("the watched revision was compacted")
)

// etcdSource is "from etcd KEY". It reads the key, then watches it from the
// revision it read at; when the watch ends (a compaction, a lost leader, an
// error), it reads the key again and watches anew. While etcd is down, the
// client resumes the watch by itself once etcd is back.
type etcdSource struct {
	key  string
	conn *etcdConn
	// watching, when a test sets it, is called with the revision each
	// watch is to start from, before it starts.
	watching func(rev int64)
}

// newEtcdSource returns the source of "from etcd KEY", over conn.
func newEtcdSource(key string, conn *etcdConn) *etcdSource { return &etcdSource{key: key, conn: conn} }

// String implements valueSource.
func (s *etcdSource) String() string { return "etcd " + s.key }

// logName names the source in log lines, with the endpoints it reads.
func (s *etcdSource) logName() string { return s.String() + " at " + s.conn.String() }

// run implements valueSource.
func (s *etcdSource) run(ctx context.Context, report func(text string, rev int64, err error)) {
	var delay time.Duration
	for wait.For(ctx, delay) {
		delay = etcdRetry
		client, err := s.conn.get()
		var rev int64
		if err == nil {
			rev, err = s.read(ctx, client.Client, report)
		}
		if err == nil {
			err = s.watch(ctx, client.Client, rev+1, report)
		}
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errCompacted):
			log.Infof("%s: %s; reading the key again", s.logName(), err)
			delay = 0
		default:
			report("", 0, s.conn.explain(err))
		}
	}
}

// read reports the key's value, or that it does not exist, and returns the
// revision it was read at.
func (s *etcdSource) read(ctx context.Context, client *clientv3.Client, report func(text string, rev int64, err error)) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	resp, err := client.Get(ctx, s.key)
	if err != nil {
		return 0, fmt.Errorf("reading the key: %w", err)
	}
	if len(resp.Kvs) == 0 {
		report("", 0, errKeyMissing)
	} else {
		report(string(resp.Kvs[0].Value), resp.Kvs[0].ModRevision, nil)
	}
	return resp.Header.Revision, nil
}

// watch reports each change of the key from revision rev on, until the watch
// ends; it returns why.
func (s *etcdSource) watch(ctx context.Context, client *clientv3.Client, rev int64, report func(text string, rev int64, err error)) error {
	if s.watching != nil {
		s.watching(rev)
	}
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel() // ends the watch in the client too
	for resp := range client.Watch(ctx, s.key, clientv3.WithRev(rev)) {
		switch {
		case resp.CompactRevision != 0:
			return errCompacted
		case resp.Err() != nil:
			return fmt.Errorf("watching the key: %w", resp.Err())
		case len(resp.Events) == 0:
			continue
		}
		ev := resp.Events[len(resp.Events)-1] // the key's latest state
		if ev.Type == clientv3.EventTypeDelete {
			report("", 0, errKeyDeleted)
		} else {
			report(string(ev.Kv.Value), ev.Kv.ModRevision, nil)
		}
	}
	return errors.New("watching the key: the watch ended")
}
