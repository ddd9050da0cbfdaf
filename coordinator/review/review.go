// Package review reads finished work before it counts: reviewer child
// agents read a diff in parallel (correctness, goal, tests, simplicity,
// or the person's own reviewers), each reporting findings as records; one
// more agent checks every finding against the code and confirms or
// rejects it with its reason; the confirmed ones are fixed by an agent
// that may write; and the review repeats on the new diff until no
// confirmed finding is major or the rounds run out. Every finding, its
// verdict and every fix is a decision record.
package review

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ralph-dev/ralph/coordinator"
	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/kept"
	"github.com/ralph-dev/ralph/memory/text"
	"github.com/ralph-dev/ralph/workers/tools"
	"github.com/spf13/afero"
)

// Severities of a finding: a major one is fixed before the work counts.
const (
	Major = "major"
	Minor = "minor"
)

// Verdicts on a finding.
const (
	Confirmed = "confirmed"
	Rejected  = "rejected"
)

// Finding is one thing a reviewer found.
type Finding struct {
	ID       string `json:"id"` // f1, f2, … in the order reported
	Reviewer string `json:"reviewer"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity"`
	Why      string `json:"why"`
	// Verdict and Reason are the check's: confirmed or rejected, and why.
	Verdict string `json:"verdict,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Round   int    `json:"round"`
}

// Reviewer is one reviewer: its name and what it looks for.
type Reviewer struct {
	Name   string
	Prompt string
}

// Defaults are the reviewers of a review that names none.
func Defaults() []Reviewer {
	return []Reviewer{
		{"correctness", "Look for bugs: wrong logic, unhandled errors and edge cases, races, resource leaks, and security holes (injection, paths escaping where they should not, secrets)."},
		{"goal", "Check that the change does what the task says, all of it, and nothing it should not: compare the task and the goals with what the diff actually does."},
		{"tests", "Check that the change is tested: new behaviour has tests that would fail without it, and the tests test what they claim."},
		{"simplicity", "Look for needless complexity: duplicated code, dead code, a second copy of something that exists, abstractions with one use."},
	}
}

// Input is the work a review reads.
type Input struct {
	// TaskID and Task say what the work was for ("" outside a task).
	TaskID, Task string
	Goals        string
	// Verify is the end of the verify command's output, if one ran.
	Verify string
	// Diff returns the work's patch as it is now (read again after a
	// fix).
	Diff func(ctx context.Context) (string, error)
}

// Agents runs child agents: the coordinator's RunChild.
type Agents interface {
	RunChild(ctx context.Context, t coordinator.ChildTask) (event.Result, string, error)
}

// Options configures a review.
type Options struct {
	Reviewers []Reviewer
	// Rounds bounds review-and-fix rounds (default 3).
	Rounds int
	// FindingsOnly reports the findings of one round and changes nothing:
	// no check, no fix.
	FindingsOnly bool
	// Record keeps a decision record (decisions.jsonl); nil keeps none.
	Record func(memory.DecisionRecord)
	// Note tells the person how the review goes; nil says nothing.
	Note func(string)
	// Agent, when set, runs each reviewer instead of ralph's own child
	// agents: another CLI (--reviewer codex), which prints its findings
	// as a JSON list; the check and the fixes stay ralph's.
	Agent ExternalReviewer
}

// ExternalReviewer runs a reviewer's prompt through another agent and
// returns its final text and usage.
type ExternalReviewer func(ctx context.Context, prompt string) (string, conversation.Usage, error)

// Report is what a review did.
type Report struct {
	Findings []Finding `json:"findings"`
	Rounds   int       `json:"rounds"`
	// Clean: the last round found no confirmed major finding, and every
	// reviewer reported. A review that could not run is never clean.
	Clean bool `json:"clean"`
	// Error says why the review could not be done (a reviewer that
	// failed, timed out or reported nothing), "" when it was.
	Error string `json:"error,omitempty"`
	// Fixes are the fixing agents' summaries, one per round that fixed.
	Fixes    []string           `json:"fixes,omitempty"`
	Usage    conversation.Usage `json:"usage"`
	CostUSD  *float64           `json:"cost_usd,omitempty"`
	Duration time.Duration      `json:"duration_ns"`
}

// maxDiff bounds the patch a reviewer is given in its prompt; it reads
// the files for the rest.
const maxDiff = 60 << 10

// ErrNothingToReview is a diff with no change in it.
var ErrNothingToReview = errors.New("there is no change to review")

// ErrIncomplete is a review that could not be done: a reviewer failed,
// timed out or never reported. Its findings are not all there is, so it
// does not pass; the error names the reviewers and why.
var ErrIncomplete = errors.New("the review could not be done")

// incomplete is ErrIncomplete with what the reviewers said, and the
// model's configuration error when that is why they could not run.
type incomplete struct {
	msg    string
	config error
}

func (e *incomplete) Error() string { return e.msg }

func (e *incomplete) Unwrap() []error {
	if e.config == nil {
		return []error{ErrIncomplete}
	}
	return []error{ErrIncomplete, e.config}
}

// Run reviews in.
func Run(ctx context.Context, a Agents, in Input, o Options) (Report, error) {
	start := time.Now()
	if len(o.Reviewers) == 0 {
		o.Reviewers = Defaults()
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	note := o.Note
	if note == nil {
		note = func(string) {}
	}
	var rep Report
	var err error
	defer func() {
		rep.Duration = time.Since(start)
		if o.Record != nil && !errors.Is(err, ErrNothingToReview) {
			o.Record(memory.DecisionRecord{Time: time.Now().UTC(), Kind: "review_done", Task: in.TaskID,
				Detail: fmt.Sprintf("%s, %s, %d confirmed, %s; %s", text.Counted(rep.Rounds, "round", "rounds"), text.Counted(len(rep.Findings), "finding", "findings"),
					len(confirmed(rep.Findings)), text.Counted(len(rep.Fixes), "fix", "fixes"), verdictOf(rep)),
				Tokens: rep.Usage.InputTokens + rep.Usage.OutputTokens, DurationMS: rep.Duration.Milliseconds()})
		}
	}()
	next := 1
	for round := 1; round <= o.Rounds; round++ {
		rep.Rounds = round
		var diff string
		if diff, err = in.Diff(ctx); err != nil {
			return rep, err
		}
		if strings.TrimSpace(diff) == "" {
			if round == 1 {
				err = ErrNothingToReview
				return rep, err
			}
			rep.Clean = true
			return rep, nil
		}
		found, failed, cfgErr := reviewAll(ctx, a, in, diff, o.Reviewers, &rep, o.Agent, note)
		if len(failed) > 0 {
			// A reviewer that did not report may have found what the others
			// did not: what they found is kept, but the review fails.
			rep.Findings = append(rep.Findings, number(found, round, &next)...)
			rep.Clean = false
			err = &incomplete{msg: ErrIncomplete.Error() + ": " + strings.Join(failed, "; "), config: cfgErr}
			rep.Error = err.Error()
			return rep, err
		}
		found = number(found, round, &next)
		note(fmt.Sprintf("review round %d: %s from %s", round, text.Counted(len(found), "finding", "findings"), text.Counted(len(o.Reviewers), "reviewer", "reviewers")))
		if o.FindingsOnly {
			rep.Findings = append(rep.Findings, found...)
			rep.Clean = !hasMajor(found, false)
			return rep, ctx.Err()
		}
		if len(found) > 0 {
			judge(ctx, a, in, diff, found, &rep)
		}
		for _, f := range found {
			record(o.Record, in, f)
		}
		rep.Findings = append(rep.Findings, found...)
		if !hasMajor(found, true) {
			rep.Clean = true
			return rep, ctx.Err()
		}
		if round == o.Rounds || ctx.Err() != nil {
			break
		}
		summary := fix(ctx, a, in, diff, confirmed(found), &rep)
		rep.Fixes = append(rep.Fixes, summary)
		if o.Record != nil {
			o.Record(memory.DecisionRecord{Time: time.Now().UTC(), Kind: "review_fix", Task: in.TaskID,
				Detail: text.Clip(summary, 500), Reason: fmt.Sprintf("round %d: %s", round, text.Counted(len(confirmed(found)), "confirmed finding", "confirmed findings"))})
		}
		note(fmt.Sprintf("review round %d: fixed %s; reviewing again", round, text.Counted(len(confirmed(found)), "confirmed finding", "confirmed findings")))
	}
	return rep, ctx.Err()
}

// number gives the findings of a round their ids (f1, f2, … across
// rounds, next being the first free number) and their round.
func number(found []Finding, round int, next *int) []Finding {
	for i := range found {
		found[i].ID, found[i].Round = fmt.Sprintf("f%d", *next), round
		*next++
	}
	return found
}

// verdictOf is how a review ended, in a few words.
func verdictOf(rep Report) string {
	switch {
	case rep.Error != "":
		return "not done: " + rep.Error
	case rep.Clean:
		return "clean"
	}
	return "major findings left"
}

func hasMajor(fs []Finding, confirmedOnly bool) bool {
	for _, f := range fs {
		if f.Severity == Major && (!confirmedOnly || f.Verdict == Confirmed) {
			return true
		}
	}
	return false
}

func confirmed(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Verdict == Confirmed {
			out = append(out, f)
		}
	}
	return out
}

func record(rec func(memory.DecisionRecord), in Input, f Finding) {
	if rec == nil {
		return
	}
	where := f.File
	if f.Line > 0 {
		where += fmt.Sprintf(":%d", f.Line)
	}
	rec(memory.DecisionRecord{Time: time.Now().UTC(), Kind: "review_finding", Task: in.TaskID,
		Detail: fmt.Sprintf("%s %s (%s, %s): %s — %s", f.ID, where, f.Reviewer, f.Severity, f.Why, f.Verdict),
		Reason: f.Reason, By: memory.DecidedByAgent})
}

// add counts a child's usage in the report.
func (r *Report) add(res event.Result, mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
	r.Usage = r.Usage.Add(res.Usage)
	if res.CostUSD != nil {
		c := *res.CostUSD
		if r.CostUSD != nil {
			c = text.RoundUSD(c + *r.CostUSD)
		}
		r.CostUSD = &c
	}
}

// brief is what every agent of a review is told of the work.
func brief(in Input, diff string) string {
	var b strings.Builder
	if in.Task != "" {
		fmt.Fprintf(&b, "The task: %s\n\n", in.Task)
	}
	if g := strings.TrimSpace(in.Goals); g != "" {
		fmt.Fprintf(&b, "The project's goals:\n\n%s\n\n", text.Clip(g, 4000))
	}
	if v := strings.TrimSpace(in.Verify); v != "" {
		fmt.Fprintf(&b, "The end of the verify command's output:\n\n```\n%s\n```\n\n", text.Clip(v, 4000))
	}
	d := diff
	if len(d) > maxDiff {
		d = text.Head(d, maxDiff) + "\n… (the patch goes on: read the files it names)"
	}
	fmt.Fprintf(&b, "The change, as a patch:\n\n```diff\n%s\n```\n", d)
	return b.String()
}

// reviewAll runs every reviewer at once and gathers their findings in
// reviewer order, and, for each reviewer that did not report (it failed,
// timed out or never called report_findings), a sentence naming it and
// saying why.
func reviewAll(ctx context.Context, a Agents, in Input, diff string, rs []Reviewer, rep *Report, ext ExternalReviewer, note func(string)) ([]Finding, []string, error) {
	out := make([][]Finding, len(rs))
	why := make([]string, len(rs))
	// config is a reviewer's failure that is the model's configuration
	// (no key, an unreachable endpoint): the review fails as a usage
	// error then, as a one-shot does.
	config := make([]error, len(rs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, r := range rs {
		wg.Go(func() {
			tool := &findingsTool{reviewer: r.Name}
			prompt := "You review a change as the " + r.Name + " reviewer. " + r.Prompt + "\n\n" + brief(in, diff) +
				"\nRead the files you need. Report only real problems in this change, each with the file, the line and why it is wrong; " +
				"major is a problem that must be fixed before the work counts, minor one that would be better fixed. "
			if ext != nil {
				prompt += "End your answer with the findings as a JSON list in a ```json block: " +
					`[{"file": "…", "line": 1, "severity": "major", "why": "…"}]` + ", [] if you found nothing. Change no file."
				text, usage, err := ext(ctx, prompt)
				if err != nil {
					why[i] = fmt.Sprintf("the %s reviewer failed: %v", r.Name, err)
					note(why[i])
					return
				}
				rep.add(event.Result{Usage: usage}, &mu)
				out[i] = tool.parse(text)
				if !tool.reported() {
					why[i] = fmt.Sprintf("the %s reviewer printed no list of findings", r.Name)
				}
				return
			}
			prompt += "Call " + toolReportFindings + " once at the end, with an empty list if you found nothing. Change no file."
			res, failure, err := a.RunChild(ctx, coordinator.ChildTask{Prompt: prompt, TaskID: in.TaskID, Finish: tool.tools(), Role: tools.RoleReviewer})
			if err == nil {
				rep.add(res, &mu)
			}
			out[i] = tool.get()
			if cause := cmp.Or(err, res.Err); !tool.reported() && llm.IsConfigError(cause) {
				config[i] = cause
			}
			switch {
			case tool.reported():
			case err != nil:
				why[i] = fmt.Sprintf("the %s reviewer could not run: %v", r.Name, err)
			case failure != "":
				why[i] = fmt.Sprintf("the %s reviewer failed: %s", r.Name, failure)
			default:
				why[i] = fmt.Sprintf("the %s reviewer finished without calling %s", r.Name, toolReportFindings)
			}
		})
	}
	wg.Wait()
	var all []Finding
	var failed []string
	var cfgErr error
	for i, f := range out {
		all = append(all, f...)
		if why[i] != "" {
			failed = append(failed, why[i])
		}
		cfgErr = cmp.Or(cfgErr, config[i])
	}
	return all, failed, cfgErr
}

// judge has one agent check every finding against the code.
func judge(ctx context.Context, a Agents, in Input, diff string, found []Finding, rep *Report) {
	list, _ := json.MarshalIndent(found, "", "  ")
	tool := &verdictTool{}
	prompt := "Reviewers reported the findings below on a change. Check each one against the code (read the files): " +
		"is it a real problem in this change? Confirm it, or reject it with the reason (wrong, already handled, not in this change, a matter of taste).\n\n" +
		brief(in, diff) + "\nThe findings:\n\n```json\n" + string(list) + "\n```\n\nCall " + toolJudgeFindings +
		" once with a verdict for every finding. Change no file."
	res, _, err := a.RunChild(ctx, coordinator.ChildTask{Prompt: prompt, TaskID: in.TaskID, Finish: tool.tools(), Role: tools.RoleReviewer})
	if err == nil {
		var mu sync.Mutex
		rep.add(res, &mu)
	}
	verdicts := tool.get()
	for i := range found {
		v, ok := verdicts[found[i].ID]
		if !ok {
			// Unchecked: a finding counts as confirmed, since the work
			// must not count on a check that did not happen.
			v = verdict{Verdict: Confirmed, Reason: "not checked: taken as reported"}
		}
		found[i].Verdict, found[i].Reason = v.Verdict, v.Reason
	}
}

// fix has an agent fix the confirmed findings and returns its summary.
func fix(ctx context.Context, a Agents, in Input, diff string, found []Finding, rep *Report) string {
	list, _ := json.MarshalIndent(found, "", "  ")
	tool := &fixedTool{}
	prompt := "A review of a change confirmed the findings below. Fix each of them in the code, with the least change that fixes it, " +
		"and keep the tests passing.\n\n" + brief(in, diff) + "\nThe findings:\n\n```json\n" + string(list) + "\n```\n\nWhen done, call " +
		toolFixesDone + " with a short summary of what you changed."
	res, failure, err := a.RunChild(ctx, coordinator.ChildTask{Prompt: prompt, TaskID: in.TaskID, Finish: tool.tools(), Role: tools.RoleFixer})
	if err == nil {
		var mu sync.Mutex
		rep.add(res, &mu)
	}
	if s := tool.get(); s != "" {
		return s
	}
	if failure != "" {
		return "the fix did not finish: " + failure
	}
	return strings.TrimSpace(res.Text)
}

// Sort orders findings major first, then by file and line.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if (fs[i].Severity == Major) != (fs[j].Severity == Major) {
			return fs[i].Severity == Major
		}
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].Line < fs[j].Line
	})
}

// maxReviewer bounds a reviewer's file: it is a prompt.
const maxReviewer = 256 << 10

// ReviewersDir is where a project keeps its own reviewers: one markdown
// file each, its name the reviewer's, its text what the reviewer looks for.
const ReviewersDir = ".ralph/reviewers"

// LoadReviewers reads the project's own reviewers, nil when it has none
// (Run then uses Defaults), through the session's door for what enters a
// request (memory/kept): a reviewer is a prompt.
func LoadReviewers(door *kept.Door, fs afero.Fs, root string) ([]Reviewer, error) {
	dir := filepath.Join(root, filepath.FromSlash(ReviewersDir))
	infos, err := afero.ReadDir(fs, dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Reviewer
	for _, fi := range infos {
		if fi.IsDir() || !strings.EqualFold(filepath.Ext(fi.Name()), ".md") {
			continue
		}
		txt, err := door.ReadSmall(fs, filepath.Join(dir, fi.Name()), maxReviewer)
		if err != nil {
			return nil, err
		}
		if p := strings.TrimSpace(string(txt.Data)); p != "" {
			out = append(out, Reviewer{Name: strings.TrimSuffix(fi.Name(), filepath.Ext(fi.Name())), Prompt: p})
		}
	}
	return out, nil
}
