package loop

import (
	"errors"
	"fmt"
	"time"

	"github.com/ralph-dev/ralph/coordinator/llm"
	"github.com/ralph-dev/ralph/coordinator/loop/machine"
	"github.com/ralph-dev/ralph/memory"
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

// limitOf reports an attempt's error that is a rate or usage limit: when
// it resets (zero when nobody said), why the loop would wait, and what to
// call it.
func limitOf(err error) (until time.Time, reason, what string, ok bool) {
	if t, ok := llm.ResetTime(err); ok {
		return t, memory.WaitRateLimit, "the rate limit", true
	}
	var ul *agents.UsageLimitError
	if errors.As(err, &ul) {
		return ul.Until, memory.WaitUsageLimit, fmt.Sprintf("the %s usage limit", ul.Agent), true
	}
	return time.Time{}, "", "", false
}

func isLimit(err error) bool {
	_, _, _, ok := limitOf(err)
	return ok
}

// limit is the machine's view of a limit that cut an attempt short.
func limit(err error) *machine.Limit {
	until, reason, what, ok := limitOf(err)
	if !ok {
		return nil
	}
	return &machine.Limit{Until: until, Reason: reason, What: what, Err: err.Error()}
}
