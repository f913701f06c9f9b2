package router

import (
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseNATPMP(t *testing.T) {
	for _, tc := range []struct {
		msg  string // hex
		want string // address, or the error's kind
	}{
		{"0080 0000 00000009 0b162104", "11.22.33.4"}, // miniupnpd's announcement
		{"0080 0003 00000009 00000000", "no usable"},
		{"0080 0000 00000009 00000000", "no usable"},
		{"0080 0002 00000009 0b162104", "refused"},
		{"0080 0063 00000009 0b162104", "refused"},
		{"0080 0000 00000009 0b1621", "malformed"},
		{"0080 0000 00000009 0b162104 00", "malformed"},
		{"0081 0000 00000009 0b162104", "malformed"},
		{"0280 0000 00000009 0b162104", "malformed"},
		{"00", "malformed"},
		{"", "malformed"},
	} {
		a, err := ParseNATPMP(unhex(t, tc.msg))
		if got := describe(a, err); got != tc.want {
			t.Errorf("ParseNATPMP(%s) = %v, %v: %s; want %s", tc.msg, a, err, got, tc.want)
		}
	}
}

// describe names what a parser returned: the address, or the kind of error.
func describe(a netip.Addr, err error) string {
	switch {
	case err == nil:
		return a.String()
	case errors.Is(err, ErrNoUsableAddress):
		return "no usable"
	case errors.Is(err, ErrRefused):
		return "refused"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	}
	return "other: " + err.Error()
}

const (
	pcpHead  = "0281 00 00 00000078 00000010 000000000000000000000000"
	pcpNonce = "0102030405060708090a0b0c"
	pcpBody  = pcpNonce + " 11 000000 c350 c350 00000000000000000000ffff0b162104"
)

func TestParsePCP(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want string
	}{
		{pcpHead + pcpBody, "11.22.33.4"},
		{pcpHead + pcpBody + " 02 00 0004 01020304", "11.22.33.4"}, // an option
		{pcpHead + pcpBody + " 02 00 0001 01000000", "11.22.33.4"}, // padded
		{pcpHead + pcpBody + " 02 00 0008 01020304", "malformed"},  // too long
		{pcpHead + pcpBody + " 0200", "malformed"},
		{pcpHead + pcpBody[:len(pcpBody)-8], "malformed"},
		{pcpHead, "malformed"},                                                           // a MAP success without its fields
		{"0201 00 00 00000078 00000010 000000000000000000000000" + pcpBody, "malformed"}, // a request
		{"0081 00 00 00000078 00000010 000000000000000000000000" + pcpBody, "malformed"}, // NAT-PMP's version
		{"0282 00 00 00000078 00000010 000000000000000000000000" + pcpBody, "malformed"}, // PEER
		{"0280 00 00 00000000 00000000 000000000000000000000000", "announce"},
		{"", "malformed"},
		{strings.Repeat("00", 1104), "malformed"},
	} {
		m, err := ParsePCP(unhex(t, tc.msg))
		got := describe(m.Addr, err)
		if errors.Is(err, errPCPAnnounce) {
			got = "announce"
		}
		if got != tc.want {
			t.Errorf("ParsePCP(%s) = %v, %v: %s; want %s", tc.msg, m.Addr, err, got, tc.want)
		}
	}
	m, err := ParsePCP(unhex(t, "0281 00 07 00000000 00000010 000000000000000000000000"+pcpBody))
	if err != nil || m.Result != pcpNetworkFailure || !errors.Is(pcpCodeError(m.Result), ErrNoUsableAddress) {
		t.Errorf("network failure: %+v, %v", m, err)
	}
	if !errors.Is(pcpCodeError(2), ErrRefused) || !strings.Contains(pcpCodeError(2).Error(), "not authorized") {
		t.Errorf("NOT_AUTHORIZED: %v", pcpCodeError(2))
	}
}

func TestPCPMapMarshal(t *testing.T) {
	m := pcpMap{Lifetime: 120, Protocol: protoUDP, Internal: 50000, Addr: netip.AddrFrom16(netip.IPv4Unspecified().As16())}
	copy(m.Nonce[:], unhex(t, pcpNonce))
	got := hex.EncodeToString(m.marshal(netip.MustParseAddr("10.77.0.2")))
	want := strings.ReplaceAll("0201 0000 00000078 00000000000000000000ffff0a4d0002"+pcpNonce+" 11 000000 c350 0000 00000000000000000000ffff00000000", " ", "")
	if got != want {
		t.Errorf("MAP request\n got %s\nwant %s", got, want)
	}
}

func TestParseRoutes(t *testing.T) {
	const table = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"lan0\t00004D0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"lan0\t00000000\t01004D0A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
	if a, err := parseRoutes(strings.NewReader(table)); err != nil || a != netip.MustParseAddr("10.77.0.1") {
		t.Errorf("parseRoutes = %v, %v; want 10.77.0.1", a, err)
	}
	noDefault := strings.Join(strings.Split(table, "\n")[:2], "\n")
	if _, err := parseRoutes(strings.NewReader(noDefault)); !errors.Is(err, ErrNotFound) {
		t.Errorf("parseRoutes without a default route: %v", err)
	}
}

func TestParseUPnPAddr(t *testing.T) {
	for in, want := range map[string]string{
		"11.22.33.4":     "11.22.33.4",
		" 11.22.33.4\n":  "11.22.33.4",
		"":               "no usable",
		"0.0.0.0":        "no usable",
		"2001:db8::1":    "malformed",
		"11.22.33.4.5":   "malformed",
		"<b>hello</b>":   "malformed",
		"100.64.1.2":     "100.64.1.2", // the caller judges it
		"::ffff:1.2.3.4": "malformed",
	} {
		a, err := parseUPnPAddr(in)
		if got := describe(a, err); got != want {
			t.Errorf("parseUPnPAddr(%q) = %s; want %s", in, got, want)
		}
	}
}
