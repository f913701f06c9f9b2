package endpoints

import (
	"encoding/json"
	"hash/fnv"

	"github.com/globaladdr/globaladdr/plugin/webhook/wire"
)

// Split spreads eps over the fewest parts, a power of two, whose endpoints
// take at most budget bytes of JSON each, and returns them in order. A name
// goes to the part its hash chooses, with all its types: a change of a
// name rewrites one part, and a name never moves while the number of
// parts stays. There is always at least one part, empty when eps is. A
// name whose endpoints alone take more than budget still gets a part, with
// the names that share it: the part it is in may then take more than
// budget, and the number of parts grows only as the other names need.
func Split(eps []wire.Endpoint, budget int) [][]wire.Endpoint {
	sizes := make([]int, len(eps))
	hashes := make([]uint32, len(eps))
	nameSize := map[uint32]int{}
	for i := range eps {
		b, _ := json.Marshal(&eps[i]) // plain strings and numbers: no error
		sizes[i] = len(b) + 1         // and a comma
		hashes[i] = hashOf(eps[i].DNSName)
		nameSize[hashes[i]] += sizes[i]
	}
	n := 1
	// More parts than endpoints would not make any part smaller: the
	// bound ends the search for names whose hashes are equal.
	for n < len(eps) && !fits(hashes, sizes, nameSize, n, budget) {
		n *= 2
	}
	parts := make([][]wire.Endpoint, n)
	for i := range eps {
		p := hashes[i] & uint32(n-1)
		parts[p] = append(parts[p], eps[i])
	}
	return parts
}

// fits reports whether n parts hold the endpoints of hashes and sizes
// within budget, but for a part that holds a name (a hash, of nameSize)
// larger than budget by itself, which more parts would not bring within
// it.
func fits(hashes []uint32, sizes []int, nameSize map[uint32]int, n, budget int) bool {
	total, oversize := make([]int, n), make([]bool, n)
	for i, h := range hashes {
		p := h & uint32(n-1)
		total[p] += sizes[i]
		oversize[p] = oversize[p] || nameSize[h] > budget
	}
	for p := range total {
		if total[p] > budget && !oversize[p] {
			return false
		}
	}
	return true
}

// hashOf returns the hash of name that chooses its part.
func hashOf(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}
