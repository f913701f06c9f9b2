package probe

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/pion/stun/v3"
)

func TestParseEchoBody(t *testing.T) {
	for body, want := range map[string]string{
		"203.0.113.7\n":     "203.0.113.7",
		" 2001:db8::7 \r\n": "2001:db8::7",
		"fl=1\nh=example.net\nip=198.51.100.3\nts=1.5\nvisit_scheme=https\n": "198.51.100.3",
		"ip=2001:db8::3":              "2001:db8::3",
		"":                            "",
		"hello":                       "",
		"203.0.113.7 198.51.100.1":    "",
		"fe80::1%eth0":                "",
		"::ffff:203.0.113.7":          "",
		"h=x\nip=1.2.3.4\nip=5.6.7.8": "",
		"h=x\nts=1":                   "",
		"h=x\ngarbage":                "",
		"ip=not-an-address":           "",
		"<html>203.0.113.7</html>":    "",
		strings.Repeat(" ", maxEchoBody) + "203.0.113.7": "",
	} {
		a, err := parseEchoBody([]byte(body))
		switch {
		case want == "" && err == nil:
			t.Errorf("%.40q: got %s, want an error", body, a)
		case want == "":
			if ReasonOf(err) != reasonMalformed {
				t.Errorf("%.40q: reason %q, want %q", body, ReasonOf(err), reasonMalformed)
			}
		case err != nil || a.String() != want:
			t.Errorf("%.40q: got %v, %v; want %s", body, a, err, want)
		}
	}
}

func TestParseBindingResponse(t *testing.T) {
	req := stun.MustBuild(stun.TransactionID, stun.BindingRequest)
	ok := stun.MustBuild(stun.NewTransactionIDSetter(req.TransactionID), stun.BindingSuccess,
		&stun.XORMappedAddress{IP: netip.MustParseAddr("203.0.113.4").AsSlice(), Port: 4000}, stun.Fingerprint)
	if a, err := parseBindingResponse(ok.Raw, req.TransactionID); err != nil || a.String() != "203.0.113.4" {
		t.Errorf("a Binding success: %v, %v", a, err)
	}
	other := stun.MustBuild(stun.TransactionID, stun.BindingSuccess, &stun.XORMappedAddress{IP: netip.MustParseAddr("203.0.113.5").AsSlice()})
	if _, err := parseBindingResponse(other.Raw, req.TransactionID); !errors.Is(err, errOtherTransaction) {
		t.Errorf("another transaction's response: %v", err)
	}
	fail := stun.MustBuild(stun.NewTransactionIDSetter(req.TransactionID), stun.BindingError, stun.CodeBadRequest)
	if _, err := parseBindingResponse(fail.Raw, req.TransactionID); ReasonOf(err) != reasonRejected {
		t.Errorf("an error response: %v, reason %q", err, ReasonOf(err))
	}
	empty := stun.MustBuild(stun.NewTransactionIDSetter(req.TransactionID), stun.BindingSuccess)
	if _, err := parseBindingResponse(empty.Raw, req.TransactionID); ReasonOf(err) != reasonMalformed {
		t.Errorf("no XOR-MAPPED-ADDRESS: %v", err)
	}
	bad := append([]byte(nil), ok.Raw...)
	bad[len(bad)-1] ^= 1 // the fingerprint
	if _, err := parseBindingResponse(bad, req.TransactionID); ReasonOf(err) != reasonMalformed {
		t.Errorf("a wrong fingerprint: %v", err)
	}
	if _, err := parseBindingResponse([]byte("garbage"), req.TransactionID); ReasonOf(err) != reasonMalformed {
		t.Errorf("garbage: %v", err)
	}
}
