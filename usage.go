package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/scripts/suggest"
)

// nearCommand returns the subcommand a single-word task is one typo away
// from (one insertion, deletion, substitution or swap of neighbours), so
// `ralph verison` is caught, while real one-word tasks such as "loop" still
// go to the model.
func nearCommand(cmd *cobra.Command, word string) string {
	for _, c := range cmd.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			if suggest.Distance(strings.ToLower(word), name) <= 1 {
				return name
			}
		}
	}
	return ""
}

// usageError is bad input from the command line: exit 2. hint adds the
// pointer to --help, for mistakes in the command itself.
type usageError struct {
	msg  string
	hint bool
}

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error { return usageError{msg: fmt.Sprintf(format, a...)} }

func usageHintf(format string, a ...any) error {
	return usageError{msg: fmt.Sprintf(format, a...), hint: true}
}

// cobraUsage matches the errors cobra itself returns for a malformed
// command line.
var cobraUsage = regexp.MustCompile(`^(unknown (command|flag|shorthand)|accepts |requires |invalid argument|flag needs|bad flag)`)
