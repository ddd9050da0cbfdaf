package slash

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/eventwords"
	"github.com/ralph-dev/ralph/coordinator/undo"
	"github.com/ralph-dev/ralph/memory/text"
)

// parseSelection reads /diff's and /undo's arguments: --step N (or its
// old name --turn N), --task ID, --session and --force, as on the command
// line. Without one they take the project's last change still in place,
// as ralph diff and ralph undo do.
func parseSelection(args string) (undo.Selection, bool, error) {
	var sel undo.Selection
	force := false
	words := strings.Fields(args)
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, hasValue := strings.Cut(w, "=")
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(words) {
				return "", fmt.Errorf("%s needs a value", name)
			}
			i++
			return words[i], nil
		}
		switch name {
		case "--step", "--turn":
			v, err := next()
			if err != nil {
				return sel, false, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return sel, false, fmt.Errorf("%s takes a step number, not %q", name, v)
			}
			sel.Step = n
		case "--task":
			v, err := next()
			if err != nil {
				return sel, false, err
			}
			sel.Task = v
		case "--session":
			sel.Session = true
		case "--force":
			force = true
		case "--skipped":
			sel.Skipped = true
		case "--git":
			sel.Git = true
		default:
			return sel, false, fmt.Errorf("unknown argument %q; use --step N, --task ID, --session, --skipped, --force or --git", w)
		}
	}
	return sel, force, nil
}

func runDiff(ctx context.Context, h *Host, args string) (Outcome, error) {
	sel, _, err := parseSelection(args)
	if err != nil {
		return Outcome{}, fmt.Errorf("/diff: %w", err)
	}
	// The project's last change still in place, as ralph diff shows it:
	// this chat's, or an earlier session's when this one changed nothing.
	ch, err := undo.SelectChanges(ctx, h.Fs, h.Root, "", sel)
	if err != nil {
		return Outcome{}, fmt.Errorf("/diff: %w", err)
	}
	patch, err := ch.Patch(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("/diff: %w", err)
	}
	note := ""
	if n := ch.UndoneNote(); n != "" {
		note = "\n\n_" + n + "_"
	}
	h.printf("%s", h.markdown(fmt.Sprintf("**%s** of %s%s\n\n```diff\n%s```\n", ch.What, text.StripControls(ch.Session.String()), note, patch)))
	return Outcome{}, nil
}

func runUndo(ctx context.Context, h *Host, args string) (Outcome, error) {
	if h.Undo == nil {
		return Outcome{}, fmt.Errorf("/undo is %w here", ErrNotAvailable)
	}
	if h.busy() {
		return Outcome{}, fmt.Errorf("/undo: ralph is working; stop it first (Ctrl-C or /stop)")
	}
	sel, force, err := parseSelection(args)
	if err != nil {
		return Outcome{}, fmt.Errorf("/undo: %w", err)
	}
	res, err := h.Undo(ctx, sel, force)
	if err != nil {
		return Outcome{}, fmt.Errorf("/undo: %w", err)
	}
	h.printf("%s", UndoReport(res, "/undo"))
	return Outcome{}, nil
}

// UndoReport is what an undo did, in lines, as `ralph undo` and chat's
// /undo both print it; command is how the person reruns it.
func UndoReport(res *undo.Result, command string) string {
	var b strings.Builder
	if res.Session.ID != "" {
		fmt.Fprintf(&b, "from %s\n", text.StripControls(res.Session.String()))
	}
	for _, r := range res.Reverted {
		what := "commit"
		if r.Merge {
			what = "merge"
		}
		fmt.Fprintf(&b, "reverted ralph's %s %s of task %s with the commit %s\n", what, r.Commit[:min(12, len(r.Commit))], r.Task, r.Revert[:min(12, len(r.Revert))])
	}
	if len(res.Restored) > 0 {
		fmt.Fprintf(&b, "undid %s: put back %s\n", res.What, eventwords.Paths(res.Restored))
	}
	if len(res.Reopened) > 0 {
		fmt.Fprintf(&b, "reopened %s %s: open again in the task list\n", text.Plural(len(res.Reopened), "task", "tasks"), strings.Join(res.Reopened, ", "))
	}
	if len(res.Skipped) > 0 {
		// Not a plain --force: the last change is now this undo, which
		// that would take back; --skipped finishes this one.
		fmt.Fprintf(&b, "skipped %s: changed since %s; `%s --skipped --force` overwrites those files only\n", eventwords.Paths(res.Skipped), res.What, command)
	}
	if len(res.TooBig) > 0 {
		fmt.Fprintf(&b, "cannot put back %s: too big to checkpoint (checkpoint_max_file_mb)\n", eventwords.Paths(res.TooBig))
	}
	for _, d := range res.GitDone {
		b.WriteString(d + "\n")
	}
	for _, g := range res.Git {
		fmt.Fprintf(&b, "not undone: %s; to put it back: %s\n", g.What, g.Command)
	}
	if len(res.Restored)+len(res.Skipped) == 0 {
		fmt.Fprintf(&b, "%s changed no files that are still there to put back\n", res.What)
	}
	return b.String()
}
