package probe

import (
	"net/netip"
	"strings"
)

// maxEchoBody bounds what an HTTPS echo's body may hold: an address, or a
// trace of a few key=value lines.
const maxEchoBody = 4 << 10

// parseEchoBody reads the body of an HTTPS echo: one address in plain text
// (icanhazip, ipify), or key=value lines of which one is ip=ADDRESS
// (Cloudflare's /cdn-cgi/trace). Anything else is malformed.
func parseEchoBody(body []byte) (netip.Addr, error) {
	if len(body) > maxEchoBody {
		return netip.Addr{}, Errorf(reasonMalformed, "the body is larger than %d bytes", maxEchoBody)
	}
	text := strings.TrimSpace(string(body))
	if !strings.Contains(text, "=") {
		if a, ok := ParseAddr(text); ok {
			return a, nil
		}
		return netip.Addr{}, Errorf(reasonMalformed, "the body %.64q is not an address", text)
	}
	var (
		a     netip.Addr
		found bool
	)
	for line := range strings.Lines(text) {
		key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok:
			return netip.Addr{}, Errorf(reasonMalformed, "the line %.64q is not key=value", line)
		case key != "ip":
			continue
		case found:
			return netip.Addr{}, Errorf(reasonMalformed, "the body has more than one ip= line")
		}
		if a, ok = ParseAddr(value); !ok {
			return netip.Addr{}, Errorf(reasonMalformed, "ip=%.64q is not an address", value)
		}
		found = true
	}
	if !found {
		return netip.Addr{}, Errorf(reasonMalformed, "the body has no ip= line")
	}
	return a, nil
}
