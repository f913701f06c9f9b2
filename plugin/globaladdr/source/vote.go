package source

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// answer is one prober's last answer, checked: nil accepted and refused
// while it has none (it failed, or has not answered yet).
type answer struct {
	accepted []netip.Addr
	refused  []refusedAddr
}

// refusedAddr is one address a line refused, and who gave it.
type refusedAddr struct {
	addr   netip.Addr
	reason string
	by     string // the prober's name
}

// learning is what a learned source's line made of one round of answers.
type learning struct {
	// addrs are the addresses it accepted and, with several servers,
	// voted for: none, or some of one or both families.
	addrs []netip.Addr
	// refused are the addresses it refused, of the families it accepted
	// none of.
	refused []refusedAddr
	// failure is why no prober answered, nil when one did (the uplink's
	// path works, whatever the vote made of the answers).
	failure error
}

// vote makes one learning of the answers of the probers named names. Per
// family, the addresses that a strict majority of the probers that answered
// with accepted addresses of that family agree on are taken (a single
// prober is its own majority); without one, the family is left out (the
// line keeps its last good addresses of it), and disagreed says for it who
// said what; it is "" for a family without a disagreement.
func vote(answers []answer, names []string) (out learning, disagreed [2]string) {
	for fam := range 2 {
		var (
			keys  []string
			count = map[string]int{}
			says  []string
		)
		for i, a := range answers {
			addrs := ofFamily(a.accepted, fam)
			if len(addrs) == 0 {
				continue
			}
			key := joinAddrs(addrs)
			if count[key] == 0 {
				keys = append(keys, key)
			}
			count[key]++
			says = append(says, fmt.Sprintf("%s says %s", names[i], key))
		}
		if len(keys) == 0 {
			for _, a := range answers {
				out.refused = append(out.refused, ofRefused(a.refused, fam)...)
			}
			continue
		}
		best := slices.MaxFunc(keys, func(a, b string) int { return count[a] - count[b] })
		if 2*count[best] <= len(says) {
			disagreed[fam] = fmt.Sprintf("the servers disagree on the IPv%d address: %s; no strict majority of the %d that answered",
				4+2*fam, strings.Join(says, ", "), len(says))
			continue
		}
		for _, a := range answers {
			if joinAddrs(ofFamily(a.accepted, fam)) == best {
				out.addrs = append(out.addrs, ofFamily(a.accepted, fam)...)
				break
			}
		}
	}
	return out, disagreed
}

// ofRefused returns the refusals of family fam.
func ofRefused(rs []refusedAddr, fam int) []refusedAddr {
	var out []refusedAddr
	for _, x := range rs {
		if family(x.addr) == fam {
			out = append(out, x)
		}
	}
	return out
}
