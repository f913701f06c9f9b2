package etcdzone

import "testing"

// TestReaches tells the zones a server block's queries reach from those
// they never do: a block of . reaches every zone, one above or below a
// zone reaches it, one beside it (or a zone beside all of a block's
// several zones) does not.
func TestReaches(t *testing.T) {
	for _, tc := range []struct {
		block []string
		zone  string
		want  bool
	}{
		{[]string{"example.com."}, "example.com.", true},
		{[]string{"."}, "example.com.", true},
		{[]string{"example.com."}, ".", true},
		{[]string{"com."}, "example.com.", true},
		{[]string{"lab.example.com."}, "example.com.", true},
		{[]string{"example.com."}, "example.org.", false},
		{[]string{"example.com."}, "myexample.com.", false},
		{[]string{"example.com.", "0.168.192.in-addr.arpa."}, "0.168.192.in-addr.arpa.", true},
		{[]string{"example.com.", "example.net."}, "example.org.", false},
		{[]string{"lab.example.com."}, "other.example.com.", false},
	} {
		if got := newReach(tc.block).reaches(tc.zone); got != tc.want {
			t.Errorf("block %v, zone %s: reaches %v, want %v", tc.block, tc.zone, got, tc.want)
		}
	}
}
