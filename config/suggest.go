package config

import (
	"errors"
	"strings"
)

// ErrUnknownKey is wrapped by the *Error of a key the file sets that
// cardsync does not know; Error.Suggest is the known key it most likely
// misspells, when one is near.
var ErrUnknownKey = errors.New("unknown key")

// suggestKey returns the known key whose name is nearest to key by edits
// (insertions, deletions, substitutions and swaps of two neighbouring
// letters), when it is near enough to be a misspelling: at most two edits,
// and fewer than a third of key's length. "" when none is, or when two are
// equally near.
func suggestKey(key string) string {
	var names []string
	for _, k := range keys() {
		names = append(names, k.name)
	}
	return nearest(key, names)
}

// suggestEnv is suggestKey over the CARDSYNC_ variables: the known
// variable an unknown one most likely misspells, "" when none is near.
// The part after CARDSYNC_ is what is compared, so that the shared
// prefix does not make a far name look near.
func suggestEnv(name string) string {
	const prefix = "CARDSYNC_"
	names := []string{strings.TrimPrefix(PasswordEnv, prefix), strings.TrimPrefix(WarehousePasswordEnv, prefix)}
	for _, k := range keys() {
		names = append(names, strings.TrimPrefix(EnvName(k.name), prefix))
	}
	if s := nearest(strings.TrimPrefix(name, prefix), names); s != "" {
		return prefix + s
	}
	return ""
}

// nearest is the name of names nearest to word by editDistance, when it
// is near enough to be a misspelling: at most two edits, and fewer than a
// third of word's length. "" when none is, or when two are equally near.
func nearest(word string, names []string) string {
	best, bestD, tie := "", 3, false
	for _, n := range names {
		d := editDistance(word, n)
		switch {
		case d < bestD:
			best, bestD, tie = n, d, false
		case d == bestD && n != best:
			tie = true
		}
	}
	if best == "" || tie || 3*bestD >= len(word) {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b, in
// bytes: the edits of Damerau–Levenshtein, each substring edited once.
func editDistance(a, b string) int {
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
