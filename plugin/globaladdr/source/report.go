package source

import (
	"net/netip"
	"slices"
)

// reporter is how the source of one feed reports to its Set: a file or
// etcd source with value, a line with learned (learn.go), failed,
// refusedFrom, disagreed and succeeded. A prefix feed's reports go on to
// prefix.go.
type reporter struct {
	s *Set
	f *feed
}

// value takes what the file or etcd source delivered: a new value (written
// at etcd revision rev), or an error that keeps the last good addresses.
func (r reporter) value(text string, rev int64, err error) {
	s, f := r.s, r.f
	defer f.reported()
	if f.prefix != nil {
		r.prefixValue(text, err)
		return
	}
	reason := reasonRead
	var addrs []netip.Addr
	if err == nil {
		reason = reasonInvalid
		addrs, err = parseValue(text, s.internal)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if err.Error() != f.err {
			f.err = err.Error()
			keep := "keeping the last good global addresses"
			if f.addrs == nil {
				keep = "no global address from it yet: the external view answers SERVFAIL where it needs one, and is not ready, until it gives one"
			}
			log.Warningf("%s: %s; %s", f.logName(), err, keep)
			s.count(sourceErrorCount, f.String(), reason)
		}
		return
	}
	if f.err != "" && f.addrs != nil {
		log.Infof("%s: valid again", f.logName())
	}
	f.err = ""
	if !slices.Equal(addrs, f.addrs) || rev != f.rev {
		f.addrs, f.rev = addrs, rev
		s.publish()
	}
}

// failed counts a failed probe of by, for reason.
func (r reporter) failed(by, reason string) { r.s.count(sourceErrorCount, by, reason) }

// refusedFrom counts an address of by refused for reason.
func (r reporter) refusedFrom(by, reason string) { r.s.count(refusedCount, by, reason) }

// disagreed counts a vote of the line without a strict majority.
func (r reporter) disagreed() { r.s.count(disagreementCount, r.f.String()) }

// succeeded records that by gave a usable answer now.
func (r reporter) succeeded(by string) { r.s.lastSuccess(by) }
