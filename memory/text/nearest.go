package text

import "strings"

// Nearest is the candidate nearest to word by Distance, ignoring case, if
// it is near enough to be a typo of it: one edit for a word shorter than
// eight characters, two for a longer one. Among candidates equally near
// the shorter wins, then the earlier. It is "" when none is near. Mistyped
// flags and config keys are matched by it, so that both forgive the same
// typos.
func Nearest(word string, candidates []string) string {
	word = strings.ToLower(word)
	limit := 1
	if len([]rune(word)) >= 8 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		d := Distance(word, strings.ToLower(c))
		if d < bestD || d == bestD && len(c) < len(best) {
			best, bestD = c, d
		}
	}
	return best
}
