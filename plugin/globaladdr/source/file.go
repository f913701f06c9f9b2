package source

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/coredns/caddy"
	"github.com/globaladdr/globaladdr/plugin/pkg/directive"
)

// filePoll is how often a file source reads its file.
const filePoll = time.Second

// fileSource is "from file PATH". It reads the file every poll interval and
// reports when the content (or the error) differs from the last read, so
// every way of changing the file is seen, whatever the file system's time
// stamps: a write in place, a rename over it, the swap of a Kubernetes
// ConfigMap volume's ..data symlink, a deletion and a re-creation.
type fileSource struct {
	path string
	poll time.Duration
}

// newFileSource returns the source of "from file PATH", path resolved
// against the Corefile's root directive.
func newFileSource(c *caddy.Controller, path string) *fileSource {
	return &fileSource{path: directive.Rooted(c, path), poll: filePoll}
}

// String implements valueSource.
func (s *fileSource) String() string { return "file " + s.path }

// run implements valueSource.
func (s *fileSource) run(ctx context.Context, report func(text string, rev int64, err error)) {
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	type reading struct{ text, err string }
	var last reading
	for first := true; ; first = false {
		text, err := s.read()
		now := reading{text: text}
		if err != nil {
			now.err = err.Error()
		}
		if first || now != last {
			last = now
			report(text, 0, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// read returns the content of the file, which must be a regular file (not a
// FIFO that would block) of at most maxValue bytes.
func (s *fileSource) read() (string, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New(s.path + " is not a regular file")
	}
	f, err := os.Open(s.path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxValue+1))
	return string(b), err
}
