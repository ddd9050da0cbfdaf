package text

import "strconv"

// Plural is one when n is 1, many otherwise. Every message that counts
// something goes through it (or Counted), so that ralph never says
// "1 turns" or "after 1 iterations"; the guard in plural_guard_test.go
// fails on a new "%d nouns" format string written around it.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Counted is n and its noun, by Plural: "1 turn", "3 turns".
func Counted(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}
