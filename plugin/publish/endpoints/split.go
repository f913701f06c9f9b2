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
// single endpoint larger than budget still gets a part: the number of
// parts stops growing when more would not make any part smaller.
func Split(eps []wire.Endpoint, budget int) [][]wire.Endpoint {
	sizes := make([]int, len(eps))
	hashes := make([]uint32, len(eps))
	for i := range eps {
		b, _ := json.Marshal(&eps[i]) // plain strings and numbers: no error
		sizes[i] = len(b) + 1         // and a comma
		h := fnv.New32a()
		h.Write([]byte(eps[i].DNSName))
		hashes[i] = h.Sum32()
	}
	n := 1
	for {
		largest, total := 0, make([]int, n)
		for i := range eps {
			p := hashes[i] & uint32(n-1)
			total[p] += sizes[i]
			largest = max(largest, total[p])
		}
		if largest <= budget || n >= len(eps) {
			break
		}
		n *= 2
	}
	parts := make([][]wire.Endpoint, n)
	for i := range eps {
		p := hashes[i] & uint32(n-1)
		parts[p] = append(parts[p], eps[i])
	}
	return parts
}
