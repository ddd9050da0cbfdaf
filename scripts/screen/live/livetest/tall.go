// Package livetest holds what tests of the live answer region share with
// the end-to-end tests of the faces that use it, as net/http/httptest
// does for net/http.
package livetest

import (
	"fmt"
	"strings"
)

// TallAnswer is an answer whose blocks do not fit a window cols wide: a
// 60-line code block, 40 code lines wider than cols, a table wider than
// cols, then a quote and a task list (issue 68's long answer). Its
// "**three**" shows whether inline markdown was rendered.
func TallAnswer(cols int) string {
	var b strings.Builder
	b.WriteString("Here is the plan, in **three** parts.\n\n```go\n")
	for i := range 60 {
		fmt.Fprintf(&b, "x%d := step(%d)\n", i, i)
	}
	b.WriteString("```\n\nAnd the wide part:\n\n```text\n")
	for i := range 40 {
		fmt.Fprintf(&b, "wide%d %s\n", i, strings.Repeat("abc ", cols/3))
	}
	b.WriteString("```\n\n| name | what it does |\n|---|---|\n")
	for i := range 8 {
		fmt.Fprintf(&b, "| row%d | %s |\n", i, strings.Repeat("words ", cols/5))
	}
	b.WriteString("\n> a quote here\n\n- [ ] a task\n- [x] done\n\nThe end.")
	return b.String()
}
