package text

import "strings"

// Fenced puts s in a markdown code fence longer than any run of
// backticks in it, so a model sees its exact text, and ends with a
// newline.
func Fenced(s string) string {
	n, run := 3, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", n)
	return fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}
