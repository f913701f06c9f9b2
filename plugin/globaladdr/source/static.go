package source

import (
	"context"
	"strings"
)

// staticSource is "uplink NAME static ADDRESS...": addresses that do not
// change, given a name so that the uplink's check decides whether they
// are served.
type staticSource struct{ addrs []string }

// String implements valueSource.
func (s *staticSource) String() string { return "static " + strings.Join(s.addrs, " ") }

// run implements valueSource: the addresses, once.
func (s *staticSource) run(ctx context.Context, report func(text string, rev int64, err error)) {
	report(strings.Join(s.addrs, " "), 0, nil)
	<-ctx.Done()
}
