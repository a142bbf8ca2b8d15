package configdef

import "strings"

// Distance is the Damerau–Levenshtein distance between a and b (optimal
// string alignment: insertions, deletions, substitutions and swaps of two
// neighbouring bytes each cost one). Keys are ASCII, so bytes are
// characters.
func Distance(a, b string) int {
	// Three rows: the one before the previous is needed for swaps.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// maxTypos is how far a key may be from a known one to count as a typo of
// it: one edit for short keys, where two would make most short keys look
// alike, up to three for long dotted keys.
func maxTypos(key string) int {
	switch n := len(key); {
	case n <= 6:
		return 1
	case n <= 20:
		return 2
	default:
		return 3
	}
}

// Nearest returns the known key closest to key, if it is close enough to
// be a typo of it (see maxTypos); ties go to the first in alphabetical
// order. prefixes are open-ended families such as "producer." or
// "producer.override.": a key whose leading segments are a typo of one
// ("prodcer.acks") is answered with the corrected prefix
// ("producer.acks").
func Nearest(key string, known []string, prefixes ...string) (string, bool) {
	best, bestD := "", maxTypos(key)+1
	for _, k := range known {
		if k == key {
			return "", false
		}
		if abs(len(k)-len(key)) >= bestD {
			continue
		}
		if d := Distance(key, k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if best != "" {
		return best, true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			continue
		}
		// Compare as many dot-separated segments as the prefix has.
		head, n := "", 0
		for i := 0; i < len(key); i++ {
			if key[i] == '.' {
				n++
				if n == strings.Count(p, ".") {
					head = key[:i+1]
					break
				}
			}
		}
		if head == "" {
			continue
		}
		if d := Distance(head, p); d > 0 && d <= min(2, maxTypos(p)) {
			return p + key[len(head):], true
		}
	}
	return "", false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
