package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// promptFlags are the root command's flags that ask for a prompt: a word
// after one of them is that prompt, even a command's name.
var promptFlags = []string{"continue", "session", "print"}

// promptWord keeps a one-word prompt from being taken for a command:
// `ralph -c continue` and `ralph -c stop` continue the latest session
// with the word "continue" or "stop". cobra looks the first word that is
// no flag up among the commands before it parses a flag, so it ran
// `ralph stop` there and refused the root's -c (unknown shorthand flag).
// When a flag of promptFlags comes before a first word that names a
// command, the arguments are put so that the word is the root's: the
// flags first, then "--" and the words. Anything else, `ralph stop`
// included, is left as it is.
func promptWord(root *cobra.Command, args []string) []string {
	lookup := func(name string) *pflag.Flag {
		if f := root.Flags().Lookup(name); f != nil {
			return f
		}
		return root.PersistentFlags().Lookup(name)
	}
	short := func(s string) *pflag.Flag {
		if f := root.Flags().ShorthandLookup(s); f != nil {
			return f
		}
		return root.PersistentFlags().ShorthandLookup(s)
	}
	prompting := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return args
		case strings.HasPrefix(a, "--"):
			name, _, valued := strings.Cut(a[2:], "=")
			f := lookup(name)
			if f == nil {
				return args // cobra says what is wrong with it
			}
			prompting = prompting || slices.Contains(promptFlags, f.Name)
			if !valued && f.NoOptDefVal == "" {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				f := short(a[j : j+1])
				if f == nil {
					return args
				}
				prompting = prompting || slices.Contains(promptFlags, f.Name)
				if f.NoOptDefVal == "" {
					// The rest of the word, or the next one, is its value.
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			if !prompting || !isCommand(root, a) {
				return args
			}
			flags, words := splitFlags(args[i+1:], lookup, short)
			return slices.Concat(args[:i], flags, []string{"--", a}, words)
		}
	}
	return args
}

// isCommand reports whether word names one of root's commands.
func isCommand(root *cobra.Command, word string) bool {
	for _, c := range root.Commands() {
		if c.Name() == word || slices.Contains(c.Aliases, word) {
			return true
		}
	}
	return false
}

// splitFlags parts the arguments after a prompt's first word into the
// flags (with their values) and the words, as cobra with interspersed
// flags would read them; everything after "--" is words.
func splitFlags(args []string, lookup, short func(string) *pflag.Flag) (flags, words []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return flags, append(words, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			flags = append(flags, a)
			name, _, valued := strings.Cut(a[2:], "=")
			if f := lookup(name); f != nil && !valued && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			for j := 1; j < len(a); j++ {
				f := short(a[j : j+1])
				if f == nil || f.NoOptDefVal != "" {
					continue
				}
				if j == len(a)-1 && i+1 < len(args) {
					i++
					flags = append(flags, args[i])
				}
				break
			}
		default:
			words = append(words, a)
		}
	}
	return flags, words
}
