package config

import (
	"strings"
	"unicode/utf8"
)

// Suggest returns the candidate closest to word by edit distance (case
// insensitive), when it is close enough to be the word meant: at most one
// edit for words of up to four letters, two up to eight, three beyond
// ("maxid" finds "maxid1").
func Suggest(word string, candidates []string) (string, bool) {
	w := strings.ToLower(word)
	limit := 1
	switch {
	case len(w) > 8:
		limit = 3
	case len(w) > 4:
		limit = 2
	}
	// Lengths further apart than the limit are more edits apart than it, so
	// a long word costs no letter-by-letter comparison.
	wn := utf8.RuneCountInString(w)
	best, bestD := "", -1
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == w {
			continue
		}
		if gap := wn - utf8.RuneCountInString(lc); gap > limit || -gap > limit {
			continue
		}
		d := editDistance(w, lc)
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > limit {
		return "", false
	}
	return best, true
}

// KeyNames lists every key this build knows, sorted.
func KeyNames() []string {
	out := make([]string, 0, len(knownKeys))
	for _, k := range AllKeys() {
		out = append(out, k.Name)
	}
	return out
}

// IsKey reports whether name is a config key of this build.
func IsKey(name string) bool {
	_, ok := knownKeys[name]
	return ok
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment): insertions, deletions, substitutions and transpositions of
// adjacent letters each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
