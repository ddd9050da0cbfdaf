package loop

import (
	"errors"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
	"github.com/ralph-dev/ralph/memory/planfile"
	"github.com/ralph-dev/ralph/workers/agents"
)

// A task attempt that a rate limit (the model endpoint's 429 with a reset
// time beyond what one call waits) or an external agent's usage limit
// cut short is no failure of the task: no retry can succeed before the
// reset, and spending them, tripping the breaker and failing tasks is
// what an unattended run must not do. So the loop puts the task back to
// open without counting the attempt, starts no task until the reset time,
// says so (session.json's wait, a limit_wait event, decisions.jsonl) and
// then goes on. Tasks already running go on meanwhile; a hard stop ends
// the wait at once like any other.

// LimitOf is the limit that err is, when it is a rate limit (the model
// endpoint's 429 with a reset time beyond what one call waits) or an
// external agent's usage limit; nil when it is neither. Both hosts
// classify an attempt's error with it (the Temporal attempt too), and
// machine.Settle names it.
func LimitOf(err error) *machine.LimitSeen {
	if t, ok := llm.ResetTime(err); ok {
		return &machine.LimitSeen{Kind: memory.WaitRateLimit, Until: t}
	}
	var ul *agents.UsageLimitError
	if errors.As(err, &ul) {
		return &machine.LimitSeen{Kind: memory.WaitUsageLimit, Agent: string(ul.Agent), Until: ul.Until}
	}
	return nil
}

// Reported is the report of attempt number attempt at t whose worker's
// result is out, its error classified (a limit, a configuration the
// model cannot work with); the host adds verify's run when it ran.
func Reported(t planfile.Task, attempt int, out Outcome) machine.Report {
	r := machine.Report{Task: t, Attempt: attempt, Stopped: stoppedAttempts(t), Completed: out.Completed, Summary: out.Summary,
		Usage: out.Usage, Turns: out.Turns, CostUSD: out.CostUSD}
	if out.Err != nil {
		r.Err, r.ConfigErr, r.Limit = out.Err.Error(), llm.IsConfigError(out.Err), LimitOf(out.Err)
	}
	return r
}
