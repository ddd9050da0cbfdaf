package repl

import (
	"slices"
	"testing"
)

// Tab completes /compact and /cost like every built-in command.
func TestCompleteCompactAndCost(t *testing.T) {
	c := completerFS(t)
	do := func(line string) []string {
		cands, _ := c.Do([]rune(line), len([]rune(line)))
		var out []string
		for _, r := range cands {
			out = append(out, string(r))
		}
		return out
	}
	if got := do("/comp"); !slices.Equal(got, []string{"act"}) {
		t.Fatalf(`Do("/comp") = %q`, got)
	}
	if got := do("/co"); !slices.Contains(got, "mpact") || !slices.Contains(got, "st") {
		t.Fatalf(`Do("/co") = %q`, got)
	}
}
