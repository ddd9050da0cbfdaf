package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/screen/view"
	"github.com/ralph-dev/ralph/scripts/slash"
	"github.com/spf13/cobra"
)

// addGitCommands wires `ralph diff` and `ralph undo`, which read the git
// checkpoints ralph keeps of every turn that changed files.
func (c *cli) addGitCommands(root *cobra.Command) {
	var sel undo.Selection
	selection := func(cmd *cobra.Command, whole bool) {
		cmd.Flags().IntVar(&sel.Step, "step", 0, "the changes of model step N alone (the default is your whole last request)")
		cmd.Flags().IntVar(&sel.Step, "turn", 0, "the old name of --step")
		_ = cmd.Flags().MarkHidden("turn")
		cmd.Flags().StringVar(&sel.Task, "task", "", "the changes of every attempt at the task with this id")
		if whole {
			cmd.Flags().IntVar(&sel.Request, "request", 0, "every step of the request that began at session turn N (as ralph serve's checkpoints show it)")
			cmd.Flags().BoolVar(&sel.Session, "session", false, "everything the session changed")
		}
	}
	failed := func(err error) error {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return exit(project.ExitCode(err))
	}
	diff := &cobra.Command{
		Use:   "diff [session-id]",
		Short: "Show ralph's last change still in place in this project (or --step N, --task ID, --session), from its git checkpoints",
		Long: `Show the patch of ralph's last change still in place in this project: the newest
request (a one-shot, a chat message, a task attempt) of any session whose change
no undo took back, passing over the session of a ralph working now; or, with a
session id, that session's last change. --step N, --task ID, --request N and
--session select within that session. Which session it is goes to stderr.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := c.records()
			if err != nil {
				return err
			}
			if err := undo.RequireGit(cmd.Context(), r.Root); err != nil {
				return failed(err)
			}
			id := ""
			if len(args) > 0 {
				id = args[0]
			}
			if err := r.Diff(cmd.Context(), id, sel); err != nil {
				return failed(err)
			}
			return nil
		},
	}
	selection(diff, true)
	undo := c.undoCommand(&sel, failed)
	selection(undo, false)
	undo.Flags().BoolVar(&sel.Skipped, "skipped", false, "finish the last undo: only the files it skipped because they changed since (with --force: overwrite them)")
	undo.Flags().BoolVar(&sel.Git, "git", false, "also move the branch back that a commit of the model's moved (git reset --soft: your files and index stay)")
	root.AddCommand(diff, undo)
}

// undoCommand is `ralph undo`, reading its selection from sel (whose
// flags addGitCommands gives it) and saying an error with failed.
func (c *cli) undoCommand(sel *undo.Selection, failed func(error) error) *cobra.Command {
	undo := &cobra.Command{
		Use:   "undo [session-id]",
		Short: "Put back the files of ralph's last change still in place (or --step N, --task ID); --force overwrites files changed since",
		Long: `Put back the files that ralph changed for its last change still in place in this
project (a one-shot, a chat message, a task attempt: every model step it took),
or for model step N alone (--step), or for every attempt at a task, as they were
at the checkpoint before. Without a session id that is the newest change of any
session that no undo took back yet, so a second undo goes to the change before
it; the session of a ralph working now is passed over, and the undo names the
session it took the change from. With a session id it is that session's last
change, an undo included: ralph undo ID after an undo puts the change back.
When a later session changed the same files, undo refuses and changes nothing
(--force overwrites them).
Only files ralph changed there are touched; a file changed since (by you or a later
step) is named and left alone unless --force is given; to finish such an undo,
--skipped --force overwrites the files it skipped and no other. What the model's own git
commands did (a commit that moved your branch, a switch, a branch created or
deleted, files staged) is not undone but named, with the git command that puts it
back; --git runs the reset of a moved branch (git reset --soft) and of your index
(git read-tree) itself. Files come back byte for byte, line endings included,
whatever the attributes say. A task that ralph run --commit or --worktrees
committed is taken back with a revert commit on top (nothing you committed since
moves) and reopened in the task list; when the revert conflicts or would
overwrite your uncommitted changes, nothing is done and undo says what to run.
The undo is a checkpoint itself: undo again to take it back. Exit 1 when a file was skipped or a later session's change is in the
way, 2 outside a git repository or when there is nothing to undo, 3 while another
ralph works in the project.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			batchGC()
			r, err := c.records()
			if err != nil {
				return err
			}
			id := ""
			if len(args) > 0 {
				id = args[0]
			}
			res, err := undo.Session(cmd.Context(), undo.Options{
				Fs: r.Fs, Dir: r.Root, SessionID: id, Selection: *sel, Force: c.f.force,
				Key: modelKey(r.Root), AllowHome: c.f.allowHome,
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
	return undo
}

// DiffResult is `ralph diff --json`.
type DiffResult struct {
	Session string `json:"session_id"`
	// Changed is when the change was made; Words the first words of the
	// session's first message.
	Changed time.Time `json:"changed_at,omitzero"`
	Words   string    `json:"first_words,omitempty"`
	// RequestWords are the first words of the selected request, when
	// one request was selected.
	RequestWords string `json:"request_words,omitempty"`
	What         string `json:"what"`
	// Request and Steps are what was selected: the request (the session
	// turn it began at) and its model steps.
	Request int   `json:"request,omitempty"`
	Steps   []int `json:"steps,omitempty"`
	// TooBig are files changed there that were too big to checkpoint,
	// so the patch does not show them.
	TooBig []string `json:"too_big,omitempty"`
	// Undone says an undo took the change back: the patch is what ralph
	// did then, not what the files hold now.
	Undone bool             `json:"undone,omitempty"`
	From   string           `json:"from"`
	To     string           `json:"to"`
	Files  []git.FileChange `json:"files"`
	Patch  string           `json:"patch"`
}

// Diff shows what a session's turns changed, from its git checkpoints: the
// patch on stdout (coloured on a terminal), or one JSON object.
func (r Records) Diff(ctx context.Context, id string, sel undo.Selection) error {
	ch, err := undo.SelectChanges(ctx, r.Fs, r.Root, id, sel)
	if err != nil {
		return err
	}
	plain, err := ch.Patch(ctx)
	if err != nil {
		return err
	}
	id = ch.Session.ID
	if r.JSON {
		files, err := ch.Repo.Numstat(ctx, ch.From, ch.To, ch.Files)
		if err != nil {
			return err
		}
		return r.writeJSON(DiffResult{Session: id, Changed: ch.Session.Changed, Words: ch.Session.Words, RequestWords: ch.Session.RequestWords, What: ch.What, Request: ch.Request, Steps: ch.Steps, TooBig: ch.TooBig, Undone: ch.Undone, From: ch.From, To: ch.To, Files: files, Patch: plain})
	}
	// Said whether or not stderr is a terminal: which session's change
	// the patch is can differ from the last session's. Stdout keeps the
	// patch alone, for git apply.
	fmt.Fprintf(r.Err, "%s of %s:\n", ch.What, text.StripControls(ch.Session.String()))
	if note := ch.UndoneNote(); note != "" {
		fmt.Fprintf(r.Err, "ralph: %s\n", note)
	}
	if len(ch.TooBig) > 0 {
		// Said on stderr whether or not it is a terminal: the patch on
		// stdout is not the whole change.
		fmt.Fprintf(r.Err, "ralph: not in the patch, too big to checkpoint (checkpoint_max_file_mb): %s\n", eventwords.Paths(ch.TooBig))
	}
	// Only ralph's colours reach the terminal: the patch holds none.
	if !r.Term.OutTTY || !r.Term.Color {
		fmt.Fprint(r.Out, plain)
		return nil
	}
	for _, line := range strings.SplitAfter(plain, "\n") {
		fmt.Fprint(r.Out, colorDiffLine(line))
	}
	return nil
}

// colorDiffLine colours one line of a patch the way git does.
func colorDiffLine(line string) string {
	colors := view.Palette{On: true}
	body := strings.TrimSuffix(line, "\n")
	nl := line[len(body):]
	switch {
	case body == "":
		return line
	case strings.HasPrefix(body, "diff --git"), strings.HasPrefix(body, "index "),
		strings.HasPrefix(body, "--- "), strings.HasPrefix(body, "+++ "),
		strings.HasPrefix(body, "new file"), strings.HasPrefix(body, "deleted file"):
		return colors.Bold(body) + nl
	case strings.HasPrefix(body, "@@"):
		return colors.Cyan(body) + nl
	case body[0] == '+':
		return colors.Green(body) + nl
	case body[0] == '-':
		return colors.Red(body) + nl
	}
	return line
}

// Undo reports what `ralph undo` did; partial is true when files were
// skipped because they changed since.
func (r Records) Undo(res *undo.Result) (partial bool, err error) {
	if r.JSON {
		return len(res.Skipped) > 0, r.writeJSON(res)
	}
	fmt.Fprint(r.Out, slash.UndoReport(res, "ralph undo"))
	return len(res.Skipped) > 0, nil
}

// modelKey is the model's key as a session here would resolve it (the
// provider's variable, or api_key_env), for redaction where no session
// is open; "" when the configuration does not load.
func modelKey(root string) string {
	cfg, err := project.LoadConfig(root, os.Getenv)
	if err != nil {
		return ""
	}
	return cfg.APIKey
}

// batchGC has the collector of a command that runs once and exits (an
// undo) run a quarter as often, unless GOGC or GOMEMLIMIT says otherwise:
// an undo of 10,000 files spent a tenth of its time collecting garbage it
// would leave at its exit anyway. The soft limit keeps a very large undo
// to the memory it took before (the default collects at twice the live
// heap; this one at five times, up to 256 MiB).
func batchGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(256 << 20)
}
