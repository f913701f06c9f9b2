package etcdtree

import "strings"

// Keys are one zone's keys in etcd.
type Keys struct {
	// Key is the etcd key of the zone's apex ("/skydns/com/example"): the
	// zone's records are under Key + "/", and, for a record of the apex
	// itself, at Key.
	Key string
	// Inner are the keys of the zones inside this one, whose keys are
	// theirs: they lie below Key, but are none of this zone's.
	Inner []string
}

// Holds reports whether the etcd key is one of k's: Key itself, or below
// it, but not in one of the inner zones. A key that merely begins like it
// ("/skydns/com/example-shop") is not.
func (k Keys) Holds(key []byte) bool {
	if !under(key, k.Key) {
		return false
	}
	for _, inner := range k.Inner {
		if under(key, inner) {
			return false
		}
	}
	return true
}

// under reports whether the etcd key is apex or below it.
func under(key []byte, apex string) bool {
	rest, ok := strings.CutPrefix(string(key), apex)
	return ok && (rest == "" || rest[0] == '/')
}

// end is the end of the etcd key range that holds k's keys (and those of
// its siblings that begin like it, which Holds tells apart).
func (k Keys) end() string { return k.Key + "0" } // '0' follows '/'
