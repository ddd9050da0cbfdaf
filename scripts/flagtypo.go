package scripts

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	typo "github.com/ralph-dev/ralph/memory/text"
)

// unknownFlag matches pflag's error for a long flag it does not know,
// capturing the name as typed.
var unknownFlag = regexp.MustCompile(`^unknown flag: --([^=\s]+)`)

// flagError is every command's answer to a flag pflag refused: bad input
// (exit 2), and for a long flag one typo away from a real one the flag
// meant, in one sentence, as a mistyped subcommand gets.
func flagError(cmd *cobra.Command, err error) error {
	if m := unknownFlag.FindStringSubmatch(err.Error()); m != nil {
		if near := nearFlag(cmd, m[1]); near != "" {
			return usageErrorf("unknown flag --%s; did you mean --%s?", m[1], near)
		}
	}
	return usageHintf("%s", err.Error())
}

// nearFlag is the visible flag of cmd (its own and those it inherits)
// nearest to name, if near enough to be a typo of it: one edit for a
// short name, two for a name of eight characters or more. The distance
// is the one every "did you mean" in ralph uses (memory/text).
func nearFlag(cmd *cobra.Command, name string) string {
	name = strings.ToLower(name)
	limit := 1
	if len(name) >= 8 {
		limit = 2
	}
	best, bestD := "", limit+1
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := typo.Distance(name, f.Name); d < bestD || d == bestD && len(f.Name) < len(best) {
			best, bestD = f.Name, d
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}
