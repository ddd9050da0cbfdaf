package main

import (
	"fmt"
	"os"

	"github.com/spf13/afero"
	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/project"
)

// addGitCommands wires `ralph diff` and `ralph undo`, which read the git
// checkpoints ralph keeps of every turn that changed files.
func (c *cli) addGitCommands(root *cobra.Command) {
	var sel project.Selection
	selection := func(cmd *cobra.Command, whole bool) {
		cmd.Flags().IntVar(&sel.Turn, "turn", 0, "the changes of turn N")
		cmd.Flags().StringVar(&sel.Task, "task", "", "the changes of every attempt at the task with this id")
		if whole {
			cmd.Flags().BoolVar(&sel.Session, "session", false, "everything the session changed")
		}
	}
	failed := func(err error) error {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return exit(project.ExitCode(err))
	}
	diff := &cobra.Command{
		Use:   "diff [session-id]",
		Short: "Show what ralph's last turn changed (or --turn N, --task ID, --session), from its git checkpoints",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if r, err := c.records(); err == nil {
				if err := project.RequireGit(cmd.Context(), r.Root); err != nil {
					return failed(err)
				}
			}
			r, id, err := c.session(args)
			if err != nil {
				return err
			}
			if err := r.Diff(cmd.Context(), id, sel); err != nil {
				return failed(err)
			}
			return nil
		},
	}
	selection(diff, true)
	undo := &cobra.Command{
		Use:   "undo [session-id]",
		Short: "Put back the files ralph's last turn changed (or --turn N, --task ID); --force overwrites files changed since",
		Long: `Put back the files that ralph's last turn changed (or turn N, or every attempt at
a task) as they were at the checkpoint before it. Only files ralph changed in those
turns are touched; a file changed since (by you or a later turn) is named and left
alone unless --force is given. The undo is a checkpoint itself: undo again to take
it back. Exit 1 when a file was skipped, 2 outside a git repository or when there
is nothing to undo, 3 while another ralph works in the project.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			id := ""
			if len(args) > 0 {
				id = args[0]
			}
			res, err := project.UndoSession(cmd.Context(), project.UndoOptions{
				Fs: afero.NewOsFs(), Dir: r.Root, SessionID: id, Selection: sel, Force: c.f.force,
				Key: os.Getenv("OPENAI_API_KEY"),
			})
			if err != nil {
				return failed(err)
			}
			partial, err := r.Undo(res)
			if err != nil {
				return err
			}
			if partial {
				return exit(1)
			}
			return nil
		},
	}
	selection(undo, false)
	root.AddCommand(diff, undo)
}
