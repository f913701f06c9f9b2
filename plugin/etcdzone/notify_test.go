package etcdzone

import (
	"errors"
	"testing"
)

// TestOneLine puts the transfer plugin's failures to notify two
// secondaries, which it joins with a newline, on one line.
func TestOneLine(t *testing.T) {
	err := errors.Join(errors.New(`notify for zone "example.com." was not accepted by "192.0.2.1:53": "i/o timeout"`),
		errors.New("notify for zone \"example.com.\" was not accepted by \"192.0.2.2:53\": rcode was \"REFUSED\"\n"))
	want := `notify for zone "example.com." was not accepted by "192.0.2.1:53": "i/o timeout"; ` +
		`notify for zone "example.com." was not accepted by "192.0.2.2:53": rcode was "REFUSED"`
	if got := oneLine(err); got != want {
		t.Errorf("oneLine:\n%q\nwant\n%q", got, want)
	}
}
