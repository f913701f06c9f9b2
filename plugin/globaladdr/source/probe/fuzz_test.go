package probe

import (
	"net/netip"
	"testing"

	"github.com/pion/stun/v3"
)

// FuzzEchoBody feeds parseEchoBody arbitrary bodies: it returns one valid
// address or a malformed error, never both, never a panic.
func FuzzEchoBody(f *testing.F) {
	for _, s := range []string{"203.0.113.7\n", "ip=2001:db8::1\nts=1", "fl=1\nip=1.2.3.4\nip=5.6.7.8", "", "a=b=c\nip=::"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := parseEchoBody(body)
		if err != nil {
			if a.IsValid() || ReasonOf(err) != reasonMalformed {
				t.Fatalf("error %v with %v, reason %q", err, a, ReasonOf(err))
			}
			return
		}
		if _, ok := ParseAddr(a.String()); !ok {
			t.Fatalf("accepted %v", a)
		}
	})
}

// FuzzBindingResponse feeds parseBindingResponse arbitrary messages: it
// returns an address or an error, never a panic.
func FuzzBindingResponse(f *testing.F) {
	tid := [stun.TransactionIDSize]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	ok := stun.MustBuild(stun.NewTransactionIDSetter(tid), stun.BindingSuccess,
		&stun.XORMappedAddress{IP: netip.MustParseAddr("203.0.113.4").AsSlice(), Port: 4000}, stun.Fingerprint)
	f.Add(ok.Raw)
	f.Add(stun.MustBuild(stun.NewTransactionIDSetter(tid), stun.BindingError, stun.CodeBadRequest).Raw)
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := parseBindingResponse(raw, tid)
		if (err == nil) != a.IsValid() {
			t.Fatalf("%v, %v", a, err)
		}
	})
}
