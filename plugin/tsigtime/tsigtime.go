// Package tsigtime implements the tsigtime plugin: it gives the unsigned
// TSIG record of a BADKEY or BADSIG answer of the tsig plugin the server's
// time.
//
// RFC 8945 section 5.3.2 has such an answer unsigned: no MAC. miekg/dns,
// which packs every reply that ends in a TSIG record, also sends a Time
// Signed of zero in it (1970), which clients check before the error: dig and
// BIND report "clocks are unsynchronized" instead of the unknown key, and
// ISC's EDNS compliance tester (genreport) marks the answer tsig-bad-time.
// tsigtime packs that answer itself, with the current time, and writes it as
// bytes, below every plugin that records or changes the reply.
package tsigtime

import (
	"context"

	"github.com/coredns/coredns/plugin"

	"github.com/miekg/dns"
)

const pluginName = "tsigtime"

// TSIGTime is the tsigtime plugin's handler.
type TSIGTime struct {
	Next plugin.Handler
}

// Name implements plugin.Handler.
func (TSIGTime) Name() string { return pluginName }

// ServeDNS implements plugin.Handler: a signed query's reply goes through a
// ResponseWriter that mends an unsigned TSIG error; any other query goes on
// as it is.
func (t TSIGTime) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if query := r.IsTsig(); query != nil {
		w = &ResponseWriter{ResponseWriter: w, fudge: query.Fudge}
	}
	return plugin.NextOrFailure(t.Name(), t.Next, ctx, w, r)
}
