package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"mvdan.cc/sh/v3/shell"
)

// PluginLine carries out chat's /plugin ARGS in the project at root:
// ARGS, split as a shell splits words (no variable is expanded), go
// through `ralph plugin`'s own commands (pluginCommand), so chat takes
// Claude Code's words (install, uninstall, marketplace add …) as the
// command line does and prints the same lines. /plugin alone lists the
// plugins, as a person looking at them wants. A session reads its plugins
// when it starts, so what a change brings is said to come with the next.
func PluginLine(root string) func(args string, out io.Writer) error {
	return func(args string, out io.Writer) error {
		words, err := shell.Fields(args, func(string) string { return "" })
		if err != nil {
			return fmt.Errorf("/plugin cannot read %q as words: %w", args, err)
		}
		if len(words) == 0 {
			words = []string{"list"}
		}
		cmd := pluginCommand(func() bool { return false }, func() (string, error) { return root, nil })
		cmd.SetArgs(words)
		cmd.SetOut(out)
		cmd.SetErr(out)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		ran, err := cmd.ExecuteC()
		if err != nil {
			return pluginLineErr(cmd, ran, err)
		}
		changed := ran.Name() == "add" || ran.Name() == "remove" || ran.Name() == "update"
		if ran.Parent() != nil && ran.Parent().Name() == "marketplace" {
			// A marketplace added brings no plugin yet; one removed
			// takes its plugins with it.
			changed = ran.Name() == "remove"
		}
		if changed {
			fmt.Fprintln(out, "This session keeps the plugins it started with: the change (hooks, skills, commands, agents) takes effect when ralph starts again.")
		}
		return nil
	}
}

// pluginLineErr is what chat says of a /plugin line cobra refused: the
// words it takes, in the person's words (an alias as typed); any other
// error as it is.
func pluginLineErr(root, ran *cobra.Command, err error) error {
	if !cobraUsage().MatchString(err.Error()) {
		return err
	}
	if ran == root {
		return fmt.Errorf("/plugin takes install NAME@MARKETPLACE|PATH, uninstall NAME, list, update [NAME] or marketplace add|list|remove (%w)", err)
	}
	words := []string{ran.CalledAs()}
	for c := ran.Parent(); c != nil; c = c.Parent() {
		words = append([]string{c.Name()}, words...)
	}
	synopsis := strings.TrimPrefix(ran.Use, ran.Name())
	return fmt.Errorf("usage: /%s%s (%w)", strings.Join(words, " "), synopsis, err)
}
