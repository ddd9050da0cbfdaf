package cli

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/projectroot"
	"github.com/ralph-dev/ralph/memory/rootfs"
	typo "github.com/ralph-dev/ralph/memory/text"
)

// nearCommand returns the subcommand a single-word task is one typo away
// from (one insertion, deletion, substitution or swap of neighbours), so
// `ralph verison` is caught, while real one-word tasks such as "loop" still
// go to the model.
func nearCommand(cmd *cobra.Command, word string) string {
	for _, c := range cmd.Commands() {
		for _, name := range append([]string{c.Name()}, c.Aliases...) {
			if typo.Distance(strings.ToLower(word), name) <= 1 {
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
var cobraUsage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(unknown (command|flag|shorthand)|accepts |requires |invalid argument|flag needs|bad flag)`)
})

// sessionsCommand is `ralph sessions`: every session of every project
// ralph has worked in, or of one (--project), the newest --limit.
func (c *cli) sessionsCommand() *cobra.Command {
	var dir string
	var limit int
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List every session ralph has worked on, across projects (--project DIR for one, --limit N for the newest)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if limit < 0 {
				return usageErrorf("--limit must not be negative, not %d", limit)
			}
			root := ""
			if dir != "" {
				r, err := projectroot.Root(dir, c.f.allowHome)
				if err != nil {
					return usageErrorf("%s", err)
				}
				root = r
			}
			return Records{Fs: rootfs.NewProjects(), JSON: c.f.json, Term: c.term, Out: c.stdout(), Err: os.Stderr}.Sessions(root, limit)
		},
	}
	cmd.Flags().StringVar(&dir, "project", "", "only this project's sessions (a directory in it)")
	cmd.Flags().IntVar(&limit, "limit", 0, "only the newest N sessions")
	cmd.AddCommand(c.sessionsSubcommands()...)
	return cmd
}
