package cli

import (
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	typo "github.com/ralph-dev/ralph/memory/text"
)

// unknownFlag matches pflag's error for a long flag it does not know, and
// for a word of one dash whose first letter is no shorthand (`-jsno`, as
// Go programs spell long flags), capturing the dashes and the name typed.
var unknownFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^unknown (?:flag: (--)|shorthand flag: '.' in (-))([^=\s]{2,})`)
})

// flagError is every command's answer to a flag pflag refused: bad input
// (exit 2), and for a long flag one typo away from a real one the flag
// meant, in one sentence, as a mistyped subcommand gets.
func flagError(cmd *cobra.Command, err error) error {
	if e, ok := valueError(err); ok {
		return e
	}
	if m := unknownFlag().FindStringSubmatch(err.Error()); m != nil {
		dashes, name := m[1]+m[2], m[3]
		if s := sdkOnlyFlag(name); s != "" && dashes == "--" {
			return usageErrorf("%s", s)
		}
		if near := nearFlag(cmd, name); near != "" {
			return usageErrorf("unknown flag %s%s; did you mean --%s?", dashes, name, near)
		}
	}
	return usageHintf("%s", err.Error())
}

// nearFlag is the flag of cmd (its own and those it inherits) nearest to
// name, if near enough to be a typo of it (text.Nearest). Hidden flags
// count: they are other agents' spellings, which people type from habit.
func nearFlag(cmd *cobra.Command, name string) string {
	var names []string
	visit := func(f *pflag.Flag) { names = append(names, f.Name) }
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return typo.Nearest(name, names)
}

// singleDashLong catches a long flag written with one dash, as Go's own
// flag package spells them (`-model x`): pflag reads it as a cluster of
// shorthands (`-m odel`) and would go on with a wrong value in silence.
// Only a word that is exactly a long flag's name is caught, so a value
// glued to a shorthand (`-mgpt-4o`) still works.
func singleDashLong(root *cobra.Command, args []string) error {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		cmd = root
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		f := cmd.Flags().Lookup(name)
		if f == nil {
			f = cmd.InheritedFlags().Lookup(name)
		}
		if f == nil || len(name) < 2 {
			continue
		}
		return usageErrorf("unknown flag -%s; did you mean --%s?", name, name)
	}
	return nil
}
