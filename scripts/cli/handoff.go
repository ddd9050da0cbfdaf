package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/memory"
)

// handoffCommand is `ralph handoff [SESSION] [goal]`.
func (c *cli) handoffCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "handoff [SESSION] [goal]",
		Short: "Start a new session from a summary the model writes of an old one (the latest by default)",
		Long: `Hand a session off to a fresh one: the model summarises the session (the latest,
or SESSION: a full id or any unique part of one) under four headings — Decisions,
Files, Open questions, What is next — and a new session starts with that summary
instead of the conversation, so a long or drifted chat goes on with a clean
context. The goal, when given, tells the summary what matters next and is kept
with it. The two sessions name each other (links.json, their transcripts and
ralph report). The summary is printed; the new session is the latest, so
ralph -c "..." goes on in it.

The first word is the session when it names one or looks like an id (or is the
only word); otherwise every word is the goal.`,
		Example: `  ralph handoff
  ralph handoff "finish the parser and its tests"
  ralph handoff 1a2b3c "write the docs"
  ralph -c "what is left to do?"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return exit(c.handoff(cmd.Context(), args)) },
	}
}

// mergeCommand is `ralph sessions merge A B`.
func (c *cli) mergeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "merge A B",
		Short: "Bring session B's conversation into session A as a summary the model writes; B is marked merged into A",
		Long: `Merge session B into session A: the model summarises B's conversation (Decisions,
Files, Open questions, What is next) and the summary goes into A's history as one
context message that names B, so the next turn of A (ralph --session A "...")
knows what B did. B is marked merged into A and keeps its whole conversation; the
two sessions name each other in links.json, their transcripts and ralph report.
A and B are full ids or unique parts of them.`,
		Example: `  ralph sessions merge 1a2b3c 4d5e6f
  ralph --session 1a2b3c "go on with what both found"`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return exit(c.merge(cmd.Context(), args[0], args[1])) },
	}
}

// handoff hands a session off and prints the summary.
func (c *cli) handoff(ctx context.Context, args []string) int {
	r, err := c.records()
	if err != nil {
		return c.fail(err)
	}
	id, goal, err := handoffArgs(r, args)
	if err != nil {
		return c.fail(err)
	}
	if err := needConversation(r, id, "hand off"); err != nil {
		return c.fail(err)
	}
	p, code := c.openSession(ctx, id)
	if p == nil {
		return code
	}
	defer p.Close()
	h, err := assemble.Handoff(ctx, p, p.Coordinator(nil, nil), goal)
	if err != nil {
		p.CloseConversation()
		return c.fail(err)
	}
	// The new session has done nothing yet; it waits for the person's
	// first message as a finished conversation does.
	_ = p.Session.SaveState(func(st *memory.State) { st.Status, st.EndedAt = memory.StatusCompleted, time.Now().UTC() })
	if c.format() != FormatText {
		err := Records{Out: c.stdout()}.writeJSON(map[string]any{"type": "handoff", "session_id": h.To, "handed_off_from": h.From, "goal": goal, "summary": h.Summary})
		return c.done(err)
	}
	fmt.Fprintln(c.stdout(), h.Summary)
	fmt.Fprintf(os.Stderr, "ralph: handed session %s off to %s; go on in it with: ralph -c \"...\"\n", h.From, h.To)
	return ExitOK
}

// merge merges session b into session a and prints the summary.
func (c *cli) merge(ctx context.Context, a, b string) int {
	r, err := c.records()
	if err != nil {
		return c.fail(err)
	}
	into, err := memory.FindSession(r.Fs, r.Root, a)
	if err != nil {
		return c.fail(usageErrorf("%s", err))
	}
	from, err := memory.FindSession(r.Fs, r.Root, b)
	if err != nil {
		return c.fail(usageErrorf("%s", err))
	}
	if into == from {
		return c.fail(usageErrorf("%q and %q are the same session %s; merge two different ones", a, b, into))
	}
	if err := needConversation(r, from, "merge"); err != nil {
		return c.fail(err)
	}
	mode := sessionMode(r, into)
	p, code := c.openSession(ctx, into)
	if p == nil {
		return code
	}
	defer p.Close()
	summary, err := assemble.Merge(ctx, p, from)
	// A session opened only to be merged into keeps the mode it had.
	_ = p.Session.SaveState(func(st *memory.State) { st.Mode = mode })
	p.CloseConversation()
	if err != nil {
		return c.fail(err)
	}
	if c.format() != FormatText {
		err := Records{Out: c.stdout()}.writeJSON(map[string]any{"type": "merge", "session_id": into, "merged_from": from, "summary": summary})
		return c.done(err)
	}
	fmt.Fprintln(c.stdout(), summary)
	fmt.Fprintf(os.Stderr, "ralph: merged session %s into %s; go on in it with: ralph --session %s \"...\"\n", from, into, into)
	return ExitOK
}

// openSession opens the project on session id, in the mode the session
// has; a task loop's session opens as a conversation, since a hand-off
// or merge works on its conversation and must not check its tasks. A nil
// project comes with the exit code.
func (c *cli) openSession(ctx context.Context, id string) (*project.Project, int) {
	mode := ""
	if r, err := c.records(); err == nil && sessionMode(r, id) == project.ModeRun {
		mode = project.ModeChat
	}
	c.f.session = id
	p, err := c.open(ctx, mode, true, nil, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
		return nil, project.ExitCode(err)
	}
	return p, ExitOK
}

// needConversation refuses, as bad input, a session with nothing to
// summarise: an empty chat's record, or one whose conversation cannot be
// read.
func needConversation(r Records, id, what string) error {
	msgs, err := memory.LoadMessages(r.Fs, memory.SessionDir(r.Root, id))
	if err != nil {
		return usageErrorf("cannot %s session %s: %s", what, id, err)
	}
	if !coordinator.Conversed(msgs) {
		return usageErrorf("session %s has no conversation to %s", id, what)
	}
	return nil
}

// sessionMode is the mode a session's record says, "" when unknown.
func sessionMode(r Records, id string) string {
	st, err := memory.LoadSessionState(r.Fs, r.Root, id)
	if err != nil {
		return ""
	}
	return st.Mode
}

// handoffArgs splits `ralph handoff`'s words into the session and the
// goal: the first word is the session when it is the only word, names a
// session, or looks like an id; otherwise the latest session is handed
// off and every word is the goal.
func handoffArgs(r Records, args []string) (id, goal string, err error) {
	if len(args) > 0 && !strings.ContainsAny(args[0], " \t\n") {
		found, ferr := memory.FindSession(r.Fs, r.Root, args[0])
		switch {
		case ferr == nil:
			return found, strings.Join(args[1:], " "), nil
		case len(args) == 1 || looksLikeID(args[0]):
			return "", "", usageErrorf("%s", ferr)
		}
	}
	id, err = memory.FindSession(r.Fs, r.Root, "")
	if err != nil {
		return "", "", usageErrorf("%s", err)
	}
	return id, strings.Join(args, " "), nil
}

// looksLikeID reports a word made of what session ids are made of (the
// time's digits, T and Z, hex digits and the dash) with a digit among
// them: a part of an id, not a word of a goal.
func looksLikeID(w string) bool {
	digit := false
	for _, r := range w {
		switch {
		case unicode.IsDigit(r):
			digit = true
		case strings.ContainsRune("abcdefTZ-", r):
		default:
			return false
		}
	}
	return digit
}

// fail reports err in one sentence and returns its exit code.
func (c *cli) fail(err error) int {
	fmt.Fprintf(os.Stderr, "ralph: %s\n", err)
	if _, ok := err.(usageError); ok {
		return ExitUsage
	}
	return project.ExitCode(err)
}

// done is the exit code of a command whose last step was writing err's
// output.
func (c *cli) done(err error) int {
	if err != nil {
		return c.fail(err)
	}
	return ExitOK
}
