package outside

// index is a map that holds its first few entries in an array: the rewrite
// of a small answer, the common case, does not allocate for it, and that of a
// large one stays linear in time. Its zero value is empty and ready; hint,
// when set, is how many entries it may come to hold.
type index[K comparable, V any] struct {
	hint int
	n    int
	keys [indexInline]K
	vals [indexInline]V
	big  map[K]V // once the array is full, everything moves here
}

// indexInline is how many entries an index holds before it takes a map: up
// to that many, a look-up compares with each.
const indexInline = 32

// get returns the value of k, and whether there is one.
func (x *index[K, V]) get(k K) (V, bool) {
	if x.big != nil {
		v, ok := x.big[k]
		return v, ok
	}
	for i := range x.n {
		if x.keys[i] == k {
			return x.vals[i], true
		}
	}
	var zero V
	return zero, false
}

// set gives k the value v.
func (x *index[K, V]) set(k K, v V) {
	if x.big != nil {
		x.big[k] = v
		return
	}
	for i := range x.n {
		if x.keys[i] == k {
			x.vals[i] = v
			return
		}
	}
	if x.n < indexInline {
		x.keys[x.n], x.vals[x.n] = k, v
		x.n++
		return
	}
	x.big = make(map[K]V, max(x.hint, 2*indexInline))
	for i := range x.n {
		x.big[x.keys[i]] = x.vals[i]
	}
	x.big[k] = v
}

// add adds k and reports whether it was new.
func (x *index[K, V]) add(k K, v V) bool {
	if _, ok := x.get(k); ok {
		return false
	}
	x.set(k, v)
	return true
}
