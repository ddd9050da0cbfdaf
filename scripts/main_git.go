package scripts

import (
	"context"
	"fmt"
	"strings"

	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory/git"
)

// DiffResult is `ralph diff --json`.
type DiffResult struct {
	Session string           `json:"session_id"`
	What    string           `json:"what"`
	From    string           `json:"from"`
	To      string           `json:"to"`
	Files   []git.FileChange `json:"files"`
	Patch   string           `json:"patch"`
}

// Diff shows what a session's turns changed, from its git checkpoints: the
// patch on stdout (coloured on a terminal), or one JSON object.
func (r Records) Diff(ctx context.Context, id string, sel project.Selection) error {
	ch, err := project.SelectChanges(ctx, r.Fs, r.Root, id, sel)
	if err != nil {
		return err
	}
	plain, err := ch.Patch(ctx)
	if err != nil {
		return err
	}
	if r.JSON {
		files, err := ch.Repo.Numstat(ctx, ch.From, ch.To, ch.Files)
		if err != nil {
			return err
		}
		return r.writeJSON(DiffResult{Session: id, What: ch.What, From: ch.From, To: ch.To, Files: files, Patch: plain})
	}
	if r.Term.ErrTTY {
		fmt.Fprintf(r.Err, "%s of session %s:\n", ch.What, id)
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
	body := strings.TrimSuffix(line, "\n")
	nl := line[len(body):]
	switch {
	case body == "":
		return line
	case strings.HasPrefix(body, "diff --git"), strings.HasPrefix(body, "index "),
		strings.HasPrefix(body, "--- "), strings.HasPrefix(body, "+++ "),
		strings.HasPrefix(body, "new file"), strings.HasPrefix(body, "deleted file"):
		return "\x1b[1m" + body + "\x1b[m" + nl
	case strings.HasPrefix(body, "@@"):
		return "\x1b[36m" + body + "\x1b[m" + nl
	case body[0] == '+':
		return "\x1b[32m" + body + "\x1b[m" + nl
	case body[0] == '-':
		return "\x1b[31m" + body + "\x1b[m" + nl
	}
	return line
}

// Undo reports what `ralph undo` did; partial is true when files were
// skipped because they changed since.
func (r Records) Undo(res *project.UndoResult) (partial bool, err error) {
	if r.JSON {
		return len(res.Skipped) > 0, r.writeJSON(res)
	}
	if len(res.Restored) > 0 {
		fmt.Fprintf(r.Out, "undid %s: put back %s\n", res.What, strings.Join(res.Restored, ", "))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(r.Out, "skipped %s: changed since %s; ralph undo --force overwrites them\n", strings.Join(res.Skipped, ", "), res.What)
	}
	if len(res.Restored) == 0 && len(res.Skipped) == 0 {
		fmt.Fprintf(r.Out, "%s changed no files that are still there to put back\n", res.What)
	}
	return len(res.Skipped) > 0, nil
}
