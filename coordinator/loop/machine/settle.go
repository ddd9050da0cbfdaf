package machine

import (
	"fmt"
	"strings"
	"time"

	"github.com/ralph-dev/ralph/coordinator/event"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/conversation"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/memory/text"
)

// The settlement turns what an attempt reported into the Outcome the
// machine takes. Both hosts call it (the local loop with its worker's
// result, the Temporal workflow with its attempt activity's), so that
// the limit's kind, the words a failure is said in, what a retry is told
// and a done task's progress entry are decided once: written per host,
// they drifted (Temporal took every limit for a rate limit, said a
// verification failure its own way and left the cost out of the
// progress entry). The hosts only build a Report; the guard test
// (coordinator/loop's TestHostsBuildNoOutcome) keeps it so.

// NotCompleted is why an attempt failed whose agent ended without
// claiming the task done.
const NotCompleted = "the worker finished without completing the task"

// LimitSeen is a rate or usage limit that an attempt's agent ran into,
// as data a host can carry (the attempt activity's outcome on Temporal).
type LimitSeen struct {
	// Kind is memory.WaitRateLimit (the model endpoint's 429) or
	// memory.WaitUsageLimit (an external agent's plan).
	Kind string `json:"kind"`
	// Agent is the external agent whose usage limit it is.
	Agent string `json:"agent,omitempty"`
	// Until is when it resets (zero: it did not say).
	Until time.Time `json:"until,omitzero"`
}

// what names the limit in sentences.
func (l LimitSeen) what() string {
	if l.Kind == memory.WaitUsageLimit && l.Agent != "" {
		return fmt.Sprintf("the %s usage limit", l.Agent)
	}
	return limitName(l.Kind)
}

// Report is what an attempt reported: the agent's result, verify's, the
// limit it ran into and what it spent.
type Report struct {
	Task    planfile.Task
	Attempt int
	// Stopped counts the task's attempts earlier stops cut short.
	Stopped int
	// Interrupted: a stop cut this attempt short.
	Interrupted bool
	// Completed: the agent claimed the task done.
	Completed bool
	Summary   string
	// Err is the attempt's error ("" when none): the agent's, or the
	// host's before or after it (its workspace, its push).
	Err string
	// ConfigErr: Err says the model is configured wrongly.
	ConfigErr bool
	// Limit: Err is a rate or usage limit.
	Limit *LimitSeen
	// Verify is the run of the verify commands (nil: none ran);
	// VerifyFailed the command that did not pass and VerifyOutput what
	// they printed, whole.
	Verify       *event.VerifyRun
	VerifyFailed string
	VerifyOutput string
	Usage        conversation.Usage
	Turns        int
	CostUSD      *float64
}

// Settle is how the attempt r reports ended, as the machine takes it.
// An attempt that passed (Passed) is not yet done: the host's own checks
// come next (a review, the commit or merge of its work, the progress
// entry), after which it calls Counted or FailedBy.
func Settle(r Report) Outcome {
	o := Outcome{Task: r.Task, Attempt: r.Attempt, Stopped: r.Stopped, Summary: r.Summary, Verify: r.Verify, Usage: r.Usage,
		Turns: r.Turns, CostUSD: r.CostUSD}
	switch {
	case r.Interrupted:
		o.Interrupted = true
		return o
	case r.ConfigErr:
		o.ConfigErr, o.Failure = true, r.Err
		return o
	case r.Limit != nil:
		o.Limit = &Limit{Until: r.Limit.Until, Reason: r.Limit.Kind, What: r.Limit.what(), Err: r.Err}
		return o
	case r.Err != "":
		o.Failure = r.Err
	case !r.Completed:
		o.Failure = NotCompleted
		if r.Summary != "" {
			o.Failure += ": " + text.Clip(r.Summary, 300)
		}
	case r.Verify != nil && !r.Verify.OK:
		// The output's head first, as reports read it, then which
		// command decided.
		o.Failure = fmt.Sprintf("verification failed: %s (`%s` did not pass)", text.Clip(strings.TrimSpace(r.VerifyOutput), 500), r.VerifyFailed)
		o.LastTry = LastTry{Error: "the --verify command failed", Verify: r.Verify.Output, Summary: text.Clip(r.Summary, 1000)}
		return o
	default:
		return o
	}
	o.LastTry = LastTry{Error: o.Failure, Summary: text.Clip(r.Summary, 1000)}
	return o
}

// Passed reports whether the attempt may count: no error, a claim of
// completion and verify passed. The host's own checks decide the rest.
func (o Outcome) Passed() bool {
	return !o.Done && o.Failure == "" && o.Limit == nil && !o.ConfigErr && !o.Interrupted
}

// Counted is o with its task done and its completion recorded (the
// progress entry and mark, or the merge into the target branch).
func (o Outcome) Counted() Outcome {
	o.Done = true
	return o
}

// FailedBy is o failed by one of the host's own checks after verify (a
// review, the commit or merge of its work); final says no retry can mend
// it (a merge conflict).
func (o Outcome) FailedBy(failure string, final bool) Outcome {
	o.Failure, o.Final = failure, final
	o.LastTry = LastTry{Error: failure, Summary: text.Clip(o.Summary, 1000)}
	return o
}

// Spent is what the attempt spent, as a sentence for its progress entry
// and a tracker's close reason ("" when it used no tokens).
func (o Outcome) Spent() string {
	u := o.Usage
	if u.InputTokens+u.OutputTokens == 0 {
		return ""
	}
	s := fmt.Sprintf("Tokens for this task: %d in, %d out", u.InputTokens, u.OutputTokens)
	if o.CostUSD != nil {
		s += ", " + text.Dollars(*o.CostUSD)
	}
	return s + "."
}

// Progress is the progress entry of a done attempt at the time now,
// written by session sessionID at iteration.
func (o Outcome) Progress(now time.Time, sessionID string, iteration int) memory.ProgressEntry {
	body := o.Summary
	if s := o.Spent(); s != "" {
		body += "\n\n" + s
	}
	return memory.ProgressEntry{Time: now, Title: o.Task.Title, Body: body, SessionID: sessionID, Iteration: iteration, TaskID: o.Task.ID,
		Attempt: o.Attempt}
}
