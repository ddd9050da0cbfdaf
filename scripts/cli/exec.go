package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addExecCommand adds `ralph exec "task"`, codex's spelling of the
// one-shot: the root's one-shot with its flags, never the chat shell (as
// -p), and "-" as the task reads it from standard input, as codex exec
// does. Without it `ralph exec say hi` went to the model as the prompt
// "exec say hi"; `ralph -- exec …` still sends the word. It must run
// after every flag of the root is defined, since it takes the root's own
// (-c, --session, --resume, --agent, …) beside the inherited ones.
func (c *cli) addExecCommand(root *cobra.Command) {
	exec := &cobra.Command{
		Use:   "exec [flags] [task]",
		Short: `Run one task and exit, as codex exec (the same as ralph "task", never the chat shell)`,
		Long: `ralph exec runs one task and exits, as codex exec does: the same one-shot as
ralph "task", with the same flags, but never the chat shell, even on a terminal
with no task (as -p). "-" as the task reads it from standard input; piped input
beside a task is given to the model as context. ralph -- exec ... sends the word
"exec" to the model instead.`,
		Example: `  ralph exec "add a --verbose flag to main.go"
  ralph exec --json -y "run the tests and fix what fails" | jq .result
  echo "summarise README.md" | ralph exec -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c.f.conv.print = true
			if len(args) == 1 && args[0] == "-" {
				// codex exec's "read the prompt from stdin": the piped
				// input alone is the task.
				args = nil
			}
			return root.RunE(cmd, args)
		},
	}
	persistent := root.PersistentFlags()
	root.Flags().VisitAll(func(f *pflag.Flag) {
		if persistent.Lookup(f.Name) == nil {
			exec.Flags().AddFlag(f)
		}
	})
	exec.Flags().SetInterspersed(true)
	root.AddCommand(exec)
}
