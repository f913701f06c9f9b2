package probe

import (
	"errors"
	"fmt"
	"testing"

	"github.com/globaladdr/globaladdr/plugin/globaladdr/source/probe/router"
)

func TestRouterError(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason string
	}{
		{router.ErrNoUsableAddress, ReasonNoAddress},
		{fmt.Errorf("PCP MAP to 10.0.0.1: %w", router.ErrNoUsableAddress), ReasonNoAddress},
		{router.ErrMalformed, reasonMalformed},
		{router.ErrRefused, reasonRejected},
		{router.ErrNotFound, reasonDiscovery},
		{errors.New("something else"), reasonOther},
	} {
		err := routerError(tc.err)
		if got := ReasonOf(err); got != tc.reason || err.Error() != tc.err.Error() {
			t.Errorf("routerError(%v) = %v of reason %s; want the same words, reason %s", tc.err, err, got, tc.reason)
		}
	}
}
