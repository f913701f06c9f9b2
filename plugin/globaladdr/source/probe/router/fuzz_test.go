package router

import (
	"errors"
	"testing"
)

// FuzzParsePCP feeds arbitrary messages to the PCP answer parser: it never
// panics, and what it accepts is a well-formed MAP answer.
func FuzzParsePCP(f *testing.F) {
	f.Add(unhex(f, pcpHead+pcpBody))
	f.Add(unhex(f, pcpHead+pcpBody+" 02 00 0001 01000000"))
	f.Add(unhex(f, "0280 00 00 00000000 00000000 000000000000000000000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParsePCP(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, errPCPAnnounce) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if len(b) > pcpMaxSize || len(b)%4 != 0 || b[0] != pcpVersion || b[1] != pcpResponse|pcpOpMap {
			t.Fatalf("accepted %x", b)
		}
		if m.Result == 0 && (len(b) < pcpMapSize || !m.Addr.IsValid() || m.Addr.Is4In6()) {
			t.Fatalf("accepted a success without a mapping: %x -> %+v", b, m)
		}
	})
}

// FuzzParseNATPMP feeds arbitrary messages to the NAT-PMP answer parser: it
// never panics, and what it accepts is a 12-byte answer with an address.
func FuzzParseNATPMP(f *testing.F) {
	f.Add(unhex(f, "0080 0000 00000009 0b162104"))
	f.Add(unhex(f, "0080 0003 00000009 00000000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseNATPMP(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrRefused) && !errors.Is(err, ErrNoUsableAddress) {
				t.Fatalf("error of no known kind: %v", err)
			}
			return
		}
		if len(b) != natpmpSize || !a.Is4() || a.IsUnspecified() {
			t.Fatalf("accepted %x -> %v", b, a)
		}
	})
}
