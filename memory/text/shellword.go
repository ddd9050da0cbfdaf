package text

import "strings"

// ShellWord is s as one bare shell word: as it is when it holds only
// characters no shell treats specially, single-quoted otherwise. A
// command ralph prints for the person to run, built from a name the
// model chose (a branch may be called `$(touch${IFS}x)`), quotes each
// such name with it.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+,:@%=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
