package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/workers/agents"

	"github.com/spf13/cobra"

	"github.com/ralph-dev/ralph/coordinator/assemble"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/project"
	"github.com/ralph-dev/ralph/coordinator/review"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/git"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/scripts/contract"
)

// ReviewHelp is `ralph review --help`.
const ReviewHelp = `Review a change before it counts: reviewer agents read its diff in parallel
(by default correctness, goal, tests and simplicity; or one per markdown file
in .ralph/reviewers/, named for the file, its text what it looks for) and
report findings (file, line, severity, why). One more agent checks each
finding against the code and confirms or rejects it, with its reason; an agent
fixes the confirmed ones; and the review repeats on the new diff until no
confirmed finding is major or --rounds is reached. Findings, verdicts and fixes
go to decisions.jsonl and ralph report.

RANGE is what git diff takes ("main..feature", "HEAD~3"); without it, the
branch against where it left the default branch (main, master), or the
uncommitted changes on the default branch, new files included.
--findings-only runs one round of the reviewers, who only read, and prints
what they found: no check, no fix, no file changed.

Exit 0 when no major finding is left, 1 when one is or when the review could
not be done (a reviewer failed, timed out or never reported its findings: a
check that did not run is no pass; --json says "clean": false and why in
"error"), 2 for bad input (no git repository, nothing to review) or when the
reviewers could not reach the model (no key, an unreachable endpoint).`

// addReviewCommand wires `ralph review`.
// ReviewJSON is ralph review's last JSON line, in place of a result.
type ReviewJSON struct {
	// Type is "review".
	Type string `json:"type"`
	// SchemaVersion is the contract's version (docs/events.md).
	SchemaVersion contract.Version `json:"schema_version"`
	// Range is the commits reviewed.
	Range string `json:"range"`
	review.Report
}

func (c *cli) addReviewCommand(root *cobra.Command) {
	var findingsOnly bool
	var rounds int
	var reviewer string
	cmd := &cobra.Command{
		Use:   "review [RANGE]",
		Short: "Review a change with reviewer agents; confirmed findings are fixed (--findings-only: just report)",
		Long:  ReviewHelp,
		Example: `  ralph review                    # the branch, or the uncommitted changes
  ralph review main..feature --findings-only --json
  ralph review HEAD~1 --rounds 1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rng := ""
			if len(args) == 1 {
				rng = args[0]
			}
			return exit(c.review(cmd.Context(), rng, findingsOnly, rounds, reviewer))
		},
	}
	cmd.Flags().BoolVar(&findingsOnly, "findings-only", false, "print the reviewers' findings and change nothing")
	cmd.Flags().IntVar(&rounds, "rounds", 3, "most review-and-fix rounds")
	cmd.Flags().StringVar(&reviewer, "reviewer", "", "run the reviewers as another agent ("+agents.Choices()+"), read-only")
	root.AddCommand(cmd)
}

// review is `ralph review [RANGE]`.
func (c *cli) review(ctx context.Context, rng string, findingsOnly bool, rounds int, reviewer string) int {
	face, code := c.oneShotFace(c.format())
	if code != 0 {
		return code
	}
	if rounds < 1 {
		return face.Fail(ExitUsage, fmt.Errorf("--rounds must be 1 or more (got %d)", rounds))
	}
	p, err := c.open(ctx, project.ModeReview, false, nil, nil)
	if err != nil {
		return face.Fail(project.ExitCode(err), err)
	}
	defer p.Close()
	// The review's session ends with its verdict, as a one-shot's does,
	// so that no later ralph takes it for one left running.
	var verdict error
	defer func() { p.EndOneShot(verdict) }()
	repo, err := git.Open(ctx, p.Root)
	if err != nil {
		return failWith(face, &verdict, ExitUsage, errors.New("ralph review reads a git diff: run it inside a git repository"))
	}
	if rng == "" {
		if rng, err = repo.ReviewBase(ctx); err != nil {
			return failWith(face, &verdict, ExitUsage, err)
		}
	}
	reviewers, err := review.LoadReviewers(p.Door, p.Fs, p.Root)
	if err != nil {
		return failWith(face, &verdict, ExitFailed, err)
	}
	var ext review.ExternalReviewer
	if reviewer != "" {
		if ext, err = assemble.ReviewerAgent(p, reviewer, 30*time.Minute); err != nil {
			return failWith(face, &verdict, ExitUsage, err)
		}
	}
	goals, _ := memory.Goals(p.Door, p.Fs, p.Root, 8<<10)
	face.Model, face.Provider, face.Cwd, face.ConfiguredStyle = p.Config.Model, p.Config.Provider, p.Root, p.Config.Style
	face.Start()
	defer face.Close()
	at := p.Attach(ctx, project.Face{Handle: face.Handle, Notify: face.Notify, Asker: face.Asker(), Signals: true})
	defer at.Detach()
	in := review.Input{Goals: goals, Diff: func(ctx context.Context) (string, error) { return repo.ReviewDiff(ctx, rng) }}
	rep, err := review.Run(ctx, at.Coord, in, review.Options{Reviewers: reviewers, Rounds: rounds, FindingsOnly: findingsOnly,
		Record: at.Coord.RecordDecision, Note: face.Notify, Agent: ext})
	face.Close()
	switch {
	case errors.Is(err, review.ErrNothingToReview):
		return failWith(face, &verdict, ExitUsage, fmt.Errorf("%w in %s", err, rng))
	case errors.Is(err, review.ErrIncomplete):
		// The report is printed still, clean false with the reason, so a
		// script reads the same shape whether the review ran or not.
		verdict = err
	case err != nil:
		return failWith(face, &verdict, ExitFailed, err)
	}
	if rep.Findings == nil {
		rep.Findings = []review.Finding{} // a list in JSON, empty or not
	}
	if face.Format == FormatJSON || face.Format == FormatStreamJSON {
		face.enc.value(ReviewJSON{Type: "review", Range: rng, Report: rep})
	} else {
		fmt.Fprint(face.Stdout, text.StripControls(reviewText(rep, findingsOnly)))
	}
	if verdict != nil {
		fmt.Fprintf(face.Stderr, "ralph: %s\n", text.StripControls(verdict.Error()))
		if llm.IsConfigError(verdict) {
			// No reviewer could reach the model: a configuration error,
			// exit 2, as a one-shot says it.
			return ExitUsage
		}
		return ExitFailed
	}
	if !rep.Clean {
		verdict = errors.New("confirmed major findings are left")
		if findingsOnly {
			verdict = errors.New("major findings were reported")
		}
		return ExitFailed
	}
	return ExitOK
}

// failWith reports err as the review's failure and keeps it as the
// session's verdict.
func failWith(face *OneShot, verdict *error, code int, err error) int {
	*verdict = err
	return face.Fail(code, err)
}

// reviewText is a review for people: its findings, major first, each with
// its verdict, and how it ended.
func reviewText(rep review.Report, findingsOnly bool) string {
	var b strings.Builder
	fs := append([]review.Finding(nil), rep.Findings...)
	review.Sort(fs)
	for _, f := range fs {
		where := f.File
		if f.Line > 0 {
			where += fmt.Sprintf(":%d", f.Line)
		}
		fmt.Fprintf(&b, "%s %s [%s, %s] %s\n", f.ID, where, f.Severity, f.Reviewer, f.Why)
		if f.Verdict != "" {
			fmt.Fprintf(&b, "   %s: %s\n", f.Verdict, f.Reason)
		}
	}
	switch {
	case rep.Error != "":
		fmt.Fprintf(&b, "The review could not be done, so it does not pass: %s.\n", rep.Error)
	case len(fs) == 0:
		b.WriteString("No findings.\n")
	case findingsOnly:
		fmt.Fprintf(&b, "%s; nothing was checked or changed (--findings-only).\n", text.Counted(len(fs), "finding", "findings"))
	case rep.Clean:
		fmt.Fprintf(&b, "Clean after %s: no confirmed major finding is left.\n", text.Counted(rep.Rounds, "round", "rounds"))
	default:
		fmt.Fprintf(&b, "After %s confirmed major findings are left.\n", text.Counted(rep.Rounds, "round", "rounds"))
	}
	return b.String()
}
